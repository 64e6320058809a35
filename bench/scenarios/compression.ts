// Scenario 11: context compression's own work, outside the LLM call, on a 5,000-message
// context, in this process: a temp SQLite database, the real compression code, and a
// backend whose summary comes back at once.
import path from 'node:path';
import type { RoundSetup } from '../../src/agent/agent-loop.ts';
import { definitionsOf } from '../../src/agent/agent-loop.ts';
import {
  compressContext,
  compressionLimits,
  compressMessages,
  keptTokenBudget,
  planCompression,
  summariserInput,
  summariserMessages,
} from '../../src/agent/compression.ts';
import { summaryLabel } from '../../src/agent/context-turns.ts';
import { defaultPersona } from '../../src/agent/persona.ts';
import { buildSystemPrompt } from '../../src/agent/system-prompt.ts';
import { estimateRequestTokens } from '../../src/agent/token-estimate.ts';
import { parseConfig, type Config } from '../../src/config.ts';
import type { ChatRequest, LlmBackend, ToolDefinition } from '../../src/llm/types.ts';
import { ProfileRegistry } from '../../src/profiles/profile-registry.ts';
import { openDatabase, type Db } from '../../src/store/database.ts';
import type { NewMessage } from '../../src/store/message.ts';
import { appendMessages, countMessages, listMessages, replaceContextPrefix } from '../../src/store/messages-repository.ts';
import { createSession, updateSession } from '../../src/store/sessions-repository.ts';
import { createToolRegistry } from '../../src/tools/builtin/index.ts';
import { projectRoot } from '../project-root.ts';
import type { ScenarioResult } from '../report.ts';
import { median } from '../statistics.ts';
import { makeTemporaryDirectory, removeTemporaryDirectory } from '../temporary-directories.ts';
import { prose } from '../seed-session.ts';
import { seededRandom } from '../../test/support/seeded-random.ts';
import { medianAndP95, spread } from './tool-calls.ts';
import { Jail, probeJail } from '../../src/jail/jail.ts';

const contextSize = 5_000;
const warmUpRuns = 5;
const measuredRuns = 30;
const budgetMs = 20;

/** A summary (as a compressed session has), then turns: a question, sometimes tool calls and results, an answer. */
function longContext(size: number): NewMessage[] {
  const random = seededRandom(5_000);
  const messages: NewMessage[] = [{ role: 'user', content: `${summaryLabel}\n\n${prose(random, 1_500)}`, is_summary: true }];
  let call = 0;
  while (messages.length < size) {
    messages.push({ role: 'user', content: prose(random, 200 + Math.floor(random() * 401)) });
    if (random() < 0.5) {
      const calls = Array.from({ length: 1 + Math.floor(random() * 3) }, () => ({
        id: `call_${++call}`,
        name: random() < 0.5 ? 'filesystem' : 'web_view',
        arguments: { path: `/home/ada/notes/${call}.md`, content: prose(random, 100 + Math.floor(random() * 900)) },
      }));
      messages.push({ role: 'assistant', content: '', tool_calls: calls });
      for (const { id, name } of calls) {
        messages.push({ role: 'tool', content: prose(random, 300 + Math.floor(random() * 2_701)), tool_call_id: id, name, success: true });
      }
    }
    messages.push({ role: 'assistant', content: prose(random, 200 + Math.floor(random() * 401)) });
  }
  return messages.slice(0, size);
}

function instantBackend(summary: string): LlmBackend & { inputs: number[] } {
  const inputs: number[] = [];
  return {
    id: 'ollama',
    defaultModel: 'bench',
    inputs,
    stream: () => {
      throw new Error('compression does not stream');
    },
    complete: async (request: ChatRequest) => {
      inputs.push(request.messages.reduce((total, message) => total + message.content.length, 0));
      return { ok: true, completion: { content: summary, thinking: '', toolCalls: [] } };
    },
    listModels: async () => ({ ok: true, models: [{ name: 'bench' }] }),
    embed: () => {
      throw new Error('compression does not embed');
    },
  };
}

async function seededSession(db: Db, messages: readonly NewMessage[]): Promise<string> {
  const session = await createSession(db, { profileId: 'secretary' });
  // SQLite caps the variables of one statement, so the rows go in a few inserts.
  for (let start = 0; start < messages.length; start += 1_000) await appendMessages(db, session.id, messages.slice(start, start + 1_000), ['context']);
  await updateSession(db, session.id, { contextTokens: 1_000_000 });
  return session.id;
}

async function timed<T>(work: () => Promise<T> | T): Promise<{ value: T; milliseconds: number }> {
  const startedAt = performance.now();
  const value = await work();
  return { value, milliseconds: performance.now() - startedAt };
}

export async function compressionBookkeeping(): Promise<ScenarioResult> {
  const directory = await makeTemporaryDirectory('hearth-bench-compression-');
  let db: Db | undefined;
  try {
    db = await openDatabase(path.join(directory, 'hearth.db'));
    const config = parseConfig({});
    const profiles = await ProfileRegistry.open(path.join(projectRoot, 'profiles'));
    const profile = profiles.get('secretary');
    if (!profile) throw new Error('the secretary profile is missing');
    const registry = createToolRegistry({ db, config, jail: new Jail({ config, logger: console }, await probeJail()), profiles, runSubagent: async () => 'not run here' });
    const tools = definitionsOf(profile.tools, registry);
    const backend = instantBackend('## Current goal\n- Keep the notes in order.\n## Key facts\n- Notes live in /home/ada/notes.');
    const setup: RoundSetup = {
      backend,
      model: 'bench',
      systemMessages: [{ role: 'system', content: buildSystemPrompt(defaultPersona, profile) }],
      toolNames: profile.tools,
      temperature: profile.temperature,
      think: false,
      contextWindow: config.OLLAMA_NUM_CTX,
      maxIterations: profile.max_iterations,
      approvalPolicies: [profile.approvals],
      jailKinds: profile.jail,
      untrustedAllow: profile.untrusted.allow,
      sessionProfileId: profile.id,
    };
    return await measure(db, config, setup, tools, backend);
  } finally {
    await db?.destroy().catch(() => undefined);
    await removeTemporaryDirectory(directory);
  }
}

async function measure(
  db: Db,
  config: Config,
  setup: RoundSetup,
  tools: ToolDefinition[],
  backend: ReturnType<typeof instantBackend>,
): Promise<ScenarioResult> {
  const messages = longContext(contextSize);
  const characters = messages.reduce((total, message) => total + message.content.length, 0);
  const input = { db, config, setup, tools, emit: () => {}, signal: new AbortController().signal };

  // Gated: compressMessages on the context as read (partition, summariser input, the instant summary,
  // replacing the prefix in one transaction, storing the new count); and the read of the context rows alone.
  const bookkeeping: number[] = [];
  const reading: number[] = [];
  let after = 0;
  for (let run = 0; run < warmUpRuns + measuredRuns; run++) {
    const sessionId = await seededSession(db, messages);
    const read = await timed(() => listMessages(db, sessionId, 'context'));
    const { value, milliseconds } = await timed(() => compressMessages(read.value, { ...input, sessionId }));
    if (value.status !== 'compressed') throw new Error(`compression did not run: ${JSON.stringify(value)}`);
    after = await countMessages(db, sessionId, 'context');
    if (after !== value.messagesAfter) throw new Error(`the context holds ${after} messages, not ${value.messagesAfter}`);
    if (run < warmUpRuns) continue;
    bookkeeping.push(milliseconds);
    reading.push(read.milliseconds);
  }

  // Whole, as a turn runs it: compressContext reads the context itself.
  const whole: number[] = [];
  for (let run = 0; run < warmUpRuns + measuredRuns; run++) {
    const sessionId = await seededSession(db, messages);
    const { value, milliseconds } = await timed(() => compressContext({ ...input, sessionId }));
    if (value.status !== 'compressed') throw new Error(`compression did not run: ${JSON.stringify(value)}`);
    if (run >= warmUpRuns) whole.push(milliseconds);
  }

  // The two big parts of the bookkeeping, each timed alone on a fresh session.
  const limits = compressionLimits(setup.contextWindow);
  const keptTokens = keptTokenBudget(config, setup.contextWindow, estimateRequestTokens(setup.systemMessages, tools));
  const planning: number[] = [];
  const replacing: number[] = [];
  for (let run = 0; run < warmUpRuns + measuredRuns; run++) {
    const sessionId = await seededSession(db, messages);
    const stored = await listMessages(db, sessionId, 'context');
    const planned = await timed(() => {
      const plan = planCompression(stored, config.CONTEXT_KEEP_RECENT, keptTokens);
      if (!plan) throw new Error('nothing to compress');
      return { plan, request: summariserMessages(summariserInput(plan.replaced, limits.inputCharacters), limits.summaryCharacters) };
    });
    const summary: NewMessage = { role: 'user', content: `${summaryLabel}\n\nA summary.`, is_summary: true };
    const replaced = await timed(() => replaceContextPrefix(db, sessionId, planned.value.plan.replaced.at(-1)!.id, summary));
    if (run < warmUpRuns) continue;
    planning.push(planned.milliseconds);
    replacing.push(replaced.milliseconds);
  }

  const count = contextSize.toLocaleString('en-US');
  return {
    rows: [
      {
        scenario: `11a. Compression bookkeeping outside the LLM call, ${count}-message context`,
        measured: `${medianAndP95(bookkeeping)}; ${measuredRuns} runs; ${count} → ${after} messages`,
        target: `median < ${budgetMs} ms`,
        passed: median(bookkeeping) < budgetMs,
      },
      {
        scenario: '11b. Same, with reading the context rows first (`compressContext`)',
        measured: `${medianAndP95(whole)}; reading alone ${medianAndP95(reading)}`,
        target: 'report only',
        passed: undefined,
      },
    ],
    details: [
      `Compression: in the bench process, a temp SQLite database (openDatabase) holding one session whose context is ` +
        `${count} messages (${characters.toLocaleString('en-US')} characters: an earlier summary, then turns of a question, ` +
        `in half of them 1–3 tool calls with results of 300–3,000 characters, and an answer), seeded afresh before each run; ` +
        `the secretary profile's system prompt and tool schemas; a backend whose \`complete()\` answers at once (the ` +
        `summariser's input it got: ${backend.inputs.at(-1)?.toLocaleString('en-US')} characters, capped). 11a times ` +
        `\`compressMessages\` (src/agent/compression.ts) on the context as read: partition into turns, build the ` +
        `summariser's input, the instant summary, replace the old turns with it in one transaction, store the new count; ` +
        `${warmUpRuns} warm-up runs, then ${measuredRuns}: ${spread(bookkeeping)}. Of that, partitioning and building the input ` +
        `${medianAndP95(planning)}, and replaceContextPrefix (deleting ${(contextSize - after + 1).toLocaleString('en-US')} rows, ` +
        `inserting the summary) ${medianAndP95(replacing)}, each timed alone on a fresh session. 11b times \`compressContext\`, ` +
        `which first reads the ${count} rows (listMessages; a turn reads them too), ${spread(whole)}.`,
    ],
  };
}
