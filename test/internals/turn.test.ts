// One whole turn (runTurn) without a server: `:memory:` SQLite behind the turn's store, a scripted
// backend behind the real BackendRegistry, the real ApprovalGate, and profiles and images in a
// temporary folder, put together by the agent's own turnPorts.
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ApprovalGate } from '../../src/agent/approval-gate.ts';
import type { AgentDependencies } from '../../src/agent/dependencies.ts';
import { runTurn, type SessionBackgroundWork } from '../../src/agent/turn.ts';
import { turnPorts } from '../../src/agent/turn-ports.ts';
import { storedTurns } from '../../src/agent/turn-store.ts';
import { parseConfig } from '../../src/config.ts';
import { Household } from '../../src/household/household.ts';
import { BackendRegistry, modelLimitsFrom, type ModelLimits } from '../../src/llm/backend-registry.ts';
import type { BackendId } from '../../src/llm/types.ts';
import type { Person } from '../../src/people/person.ts';
import { ProfileRegistry } from '../../src/profiles/profile-registry.ts';
import { isRunEnd, type AgentEvent } from '../../src/protocol/events.ts';
import { listApprovals } from '../../src/store/approvals-repository.ts';
import { openDatabase, type Db } from '../../src/store/database.ts';
import { MessageImages } from '../../src/store/message-images.ts';
import { listMessages } from '../../src/store/messages-repository.ts';
import { listActiveRuns, readDraft } from '../../src/store/runs-repository.ts';
import { createSession, findSession } from '../../src/store/sessions-repository.ts';
import type { Tool } from '../../src/tools/tool.ts';
import { ToolRegistry } from '../../src/tools/tool-registry.ts';
import { recordingLogger } from '../support/recording-logger.ts';
import { answerRound, callsRound, ScriptedBackend, type ScriptedRound } from '../support/scripted-backend.ts';

const profileText = `---
id: tester
name: Tester
description: Exercises the turn.
temperature: 0.1
max_iterations: 4
planning_enabled: false
user_tools: false
mcp_tools: false
tools: [add_numbers, show_image, wipe, save_note]
approvals:
  default: allow
  deny: [wipe]
  ask: [save_note]
---
You test things.
`;

const pixel = Buffer.from('89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c489', 'hex').toString('base64');

function tools(runs: string[]): Tool[] {
  const object = (properties: Record<string, unknown>) => ({ type: 'object', properties, required: Object.keys(properties), additionalProperties: false });
  return [
    {
      name: 'add_numbers',
      description: 'Adds two numbers.',
      parameters: object({ a: { type: 'number' }, b: { type: 'number' } }),
      execute: async (args: { a: number; b: number }) => {
        runs.push('add_numbers');
        return String(args.a + args.b);
      },
    },
    {
      name: 'show_image',
      description: 'Loads an image.',
      parameters: object({}),
      execute: async () => {
        runs.push('show_image');
        return { output: 'Loaded pixel.png.', metadata: { image: { base64: pixel, description: 'pixel.png' } } };
      },
    },
    {
      name: 'save_note',
      description: 'Saves a note.',
      parameters: object({ text: { type: 'string' } }),
      subject: (args: { text: string }) => args.text,
      execute: async (args: { text: string }) => {
        runs.push(`save_note ${args.text}`);
        return 'saved';
      },
    },
    {
      name: 'wipe',
      description: 'Wipes everything.',
      parameters: object({}),
      execute: async () => {
        runs.push('wipe');
        return 'wiped';
      },
    },
  ];
}

let folder: string;
let db: Db;
let gate: ApprovalGate | undefined;
let owner: Person;
beforeEach(async () => {
  folder = await mkdtemp(path.join(tmpdir(), 'hearth-turn-'));
  await writeFile(path.join(folder, 'tester.md'), profileText);
  db = await openDatabase(':memory:');
  owner = await new Household(db).firstOwner();
});
afterEach(async () => {
  gate?.close();
  gate = undefined;
  await db.destroy();
  await rm(folder, { recursive: true, force: true });
});

interface Turn {
  sessionId: string;
  backend: ScriptedBackend;
  events: AgentEvent[];
  runs: string[];
  controller: AbortController;
  outcome: ReturnType<typeof runTurn>;
  /** The events seen each time the turn read the session row, in order. */
  sessionReads: AgentEvent['type'][][];
}

interface TurnOptions {
  limits?: Record<BackendId, ModelLimits>;
  /** Sources the registry waits for before the first round (registry.ready()). */
  readiness?: (() => Promise<void>)[];
}

async function startTurn(
  rounds: ScriptedRound[],
  content: string,
  onEvent: (event: AgentEvent, controller: AbortController) => void = () => {},
  options: TurnOptions = {},
): Promise<Turn> {
  const runs: string[] = [];
  const events: AgentEvent[] = [];
  const backend = new ScriptedBackend(rounds);
  const { logger } = recordingLogger();
  const profiles = await ProfileRegistry.open(folder);
  gate = new ApprovalGate(db, 60_000, logger, { household: new Household(db), profiles });
  const config = parseConfig({ DATA_DIR: folder });
  const registry = new ToolRegistry(tools(runs));
  for (const ready of options.readiness ?? []) registry.addReadiness(ready);
  const deps: AgentDependencies = {
    db,
    config,
    profiles,
    tools: registry,
    backends: new BackendRegistry({ ollama: backend }, 'ollama', 2, options.limits ?? modelLimitsFrom(config)),
    persona: '',
    logger,
    memorySummary: async () => undefined,
    approvals: gate,
    images: new MessageImages(path.join(folder, 'images')),
  };
  // The SQLite store, each read of the session row noted with the events emitted before it.
  const sessionReads: AgentEvent['type'][][] = [];
  const sqlite = storedTurns(db, deps.images);
  const store = {
    ...sqlite,
    findSession: (sessionId: string) => {
      sessionReads.push(types(events));
      return sqlite.findSession(sessionId);
    },
  };
  const session = await createSession(db, { profileId: 'tester' });
  const controller = new AbortController();
  const background: SessionBackgroundWork = { settled: async () => {}, start: () => {} };
  const context = {
    sessionId: session.id,
    signal: controller.signal,
    emit: (event: AgentEvent) => {
      events.push(event);
      onEvent(event, controller);
    },
    isSubagent: false,
  };
  const outcome = runTurn(session.id, { type: 'message', input: { content } }, turnPorts(deps, store), context, background);
  return { sessionId: session.id, backend, events, runs, controller, outcome, sessionReads };
}

const types = (events: AgentEvent[]) => events.map((event) => event.type);

describe('runTurn in memory', () => {
  it('stores the message, runs the tool round, stores the answer and ends with one stream_end', async () => {
    const turn = await startTurn(
      [callsRound({ id: 'call-1', name: 'add_numbers', arguments: { a: 2, b: 3 } }), answerRound('It is 5.')],
      'What is 2 + 3?\nShow your work.',
    );

    expect(await turn.outcome).toEqual({ status: 'completed', content: 'It is 5.', contextTokens: 15 });
    expect(types(turn.events)).toEqual(['stream_start', 'tool_started', 'tool_call', 'stream_delta', 'stream_end']);
    expect(turn.events.at(-1)).toMatchObject({ type: 'stream_end', content: 'It is 5.', context_tokens: 15, max_context_tokens: 32_768 });
    expect(turn.events.filter(isRunEnd)).toHaveLength(1);

    const stored = await listMessages(db, turn.sessionId, 'display');
    expect(stored.map((message) => [message.role, message.content])).toEqual([
      ['user', 'What is 2 + 3?\nShow your work.'],
      ['assistant', ''],
      ['tool', '5'],
      ['assistant', 'It is 5.'],
    ]);
    const session = await findSession(db, turn.sessionId);
    expect(session).toMatchObject({ title: 'What is 2 + 3?', contextTokens: 15 });
    expect(await listActiveRuns(db)).toEqual([]);
    expect(await readDraft(db, turn.sessionId)).toEqual({ text: '', thinking: '' });
    // The profile's prompt and tools reached the backend.
    expect(turn.backend.requests[0]!.messages[0]).toMatchObject({ role: 'system', content: expect.stringContaining('You test things.') });
    expect(turn.backend.requests[0]!.tools?.map((tool) => tool.name)).toEqual(['add_numbers', 'show_image', 'wipe', 'save_note']);
    expect(turn.backend.requests[0]!.contextWindow).toBe(32_768);
  });

  it("asks with the chosen backend's own window and thinking flag, not the configuration's, and reports that window", async () => {
    const small = { contextWindow: 8_192, think: false };
    const turn = await startTurn([answerRound('Hello.')], 'Hi', () => {}, { limits: { ollama: small, openai: { contextWindow: 65_536, think: true } } });

    expect(await turn.outcome).toMatchObject({ status: 'completed' });
    expect(turn.backend.requests[0]).toMatchObject({ contextWindow: 8_192, think: false });
    expect(turn.events.at(-1)).toMatchObject({ type: 'stream_end', max_context_tokens: 8_192 });
  });

  it('reads the session row once before the first token, and again before each later round', async () => {
    const turn = await startTurn(
      [callsRound({ id: 'call-1', name: 'add_numbers', arguments: { a: 2, b: 3 } }), callsRound({ id: 'call-2', name: 'add_numbers', arguments: { a: 5, b: 1 } }), answerRound('6.')],
      'Add twice.',
    );

    expect(await turn.outcome).toMatchObject({ status: 'completed', content: '6.' });
    // Before the first round's request: one read, which served compression, planning and that round.
    expect(turn.sessionReads).toEqual([
      ['stream_start'],
      ['stream_start', 'tool_started', 'tool_call'],
      ['stream_start', 'tool_started', 'tool_call', 'tool_started', 'tool_call'],
    ]);
  });

  it('waits for the tool sources still loading (registry.ready()) before it reads the session or asks the model', async () => {
    const readsWhenLoaded: number[] = [];
    const turn: Turn = await startTurn([answerRound('Ready.')], 'Hi', () => {}, {
      // Loaded on a later turn of the event loop than the one that asked: a turn not waiting for it would read the session first.
      readiness: [() => new Promise<void>((resolve) => setImmediate(() => resolve(void readsWhenLoaded.push(turn.sessionReads.length))))],
    });

    expect(await turn.outcome).toMatchObject({ status: 'completed', content: 'Ready.' });
    expect(readsWhenLoaded).toEqual([0]);
    expect(turn.sessionReads).toHaveLength(1);
  });

  it('stores the partial answer as stopped and ends with stream_stopped when the person stops mid-stream', async () => {
    const turn = await startTurn(
      [
        async function* (request) {
          yield { type: 'text_delta', delta: 'Counting: one, two' };
          if (!request.signal.aborted) await new Promise((resolve) => request.signal.addEventListener('abort', resolve, { once: true }));
          yield { type: 'error', error: { code: 'aborted', message: 'stopped' } };
        },
      ],
      'Count to ten.',
      (event, controller) => event.type === 'stream_delta' && controller.abort(),
    );

    expect(await turn.outcome).toMatchObject({ status: 'stopped', content: 'Counting: one, two' });
    expect(turn.events.at(-1)).toEqual({ type: 'stream_stopped', content: 'Counting: one, two', length: 18, reason: 'user' });
    expect((await listMessages(db, turn.sessionId, 'display')).at(-1)).toMatchObject({ role: 'assistant', content: 'Counting: one, two', stopped: true });
    expect((await findSession(db, turn.sessionId))!.contextTokens).toBeGreaterThan(0);
    expect(await listActiveRuns(db)).toEqual([]);
  });

  it('refuses a call the profile denies through the real gate, records it, and the model answers', async () => {
    const turn = await startTurn([callsRound({ id: 'call-1', name: 'wipe' }), answerRound('I may not wipe.')], 'Wipe it all.');

    expect(await turn.outcome).toMatchObject({ status: 'completed', content: 'I may not wipe.' });
    expect(turn.runs).toEqual([]);
    expect(turn.backend.requests[1]!.messages.at(-1)).toMatchObject({ role: 'tool', content: expect.stringContaining('Refused by the rule wipe') });
    expect(await listApprovals(db, { status: 'all', limit: 10 })).toMatchObject([{ sessionId: turn.sessionId, tool: 'wipe', decision: 'deny', decidedBy: 'rule', rule: 'wipe' }]);
  });

  it('keeps an image a tool loaded as a file, in the model context only', async () => {
    const turn = await startTurn([callsRound({ id: 'call-1', name: 'show_image' }), answerRound('One pixel.')], 'Show me.');

    expect(await turn.outcome).toMatchObject({ status: 'completed' });
    expect(turn.backend.requests[1]!.messages.at(-1)).toMatchObject({ role: 'user', content: '[Image loaded by show_image: pixel.png]', images: [pixel] });
    const context = await listMessages(db, turn.sessionId, 'context');
    const display = await listMessages(db, turn.sessionId, 'display');
    expect(context.filter((message) => message.images)).toMatchObject([{ role: 'user', images: [expect.stringMatching(/^image:[0-9a-f]+\.png$/)] }]);
    expect(display.some((message) => message.images)).toBe(false);
    expect(await readdir(path.join(folder, 'images', turn.sessionId))).toHaveLength(1);
  });

  it('reports a backend failure as an error and a session_sync, keeping nothing half-run', async () => {
    const turn = await startTurn([[{ type: 'error', error: { code: 'llm_unreachable', message: 'connection refused' } }]], 'Hello?');

    expect(await turn.outcome).toMatchObject({ status: 'failed', error: { code: 'llm_unreachable' } });
    expect(turn.events.slice(-2)).toEqual([
      { type: 'error', code: 'llm_unreachable', message: 'connection refused' },
      { type: 'session_sync', running: false },
    ]);
    expect((await listMessages(db, turn.sessionId, 'display')).map((message) => message.role)).toEqual(['user']);
    expect(await listActiveRuns(db)).toEqual([]);
  });
  it('waits on an ask rule until the person decides through the gate, then runs the call', async () => {
    const turn = await startTurn([callsRound({ id: 'call-1', name: 'save_note', arguments: { text: 'milk' } }), answerRound('Saved.')], 'Note milk.', (event) => {
      // Decided while it is being announced: the gate registers the call before it says so.
      if (event.type === 'approval_required') gate!.decide(gate!.pending()[0]!.session_id, event.call_id, { decision: 'allow', via: 'page', decider: owner });
    });

    expect(await turn.outcome).toMatchObject({ status: 'completed', content: 'Saved.' });
    expect(turn.runs).toEqual(['save_note milk']);
    expect(types(turn.events)).toEqual(['stream_start', 'tool_started', 'approval_required', 'approval_resolved', 'tool_call', 'stream_delta', 'stream_end']);
    expect(await listApprovals(db, { status: 'all', limit: 10 })).toMatchObject([{ tool: 'save_note', subject: 'milk', rule: 'save_note', decision: 'allow', decidedBy: 'user' }]);
  });
});
