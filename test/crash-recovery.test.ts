import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { interruptedCallResult } from '../src/agent/recover-runs.ts';
import { type Hearth, useHearth } from './support/hearth-server.ts';
import type { RecordedRequest, ScriptedLlm } from './support/scripted-llm.ts';
import { startScriptedOllama } from './support/scripted-ollama.ts';
import { startScriptedOpenAI } from './support/scripted-openai.ts';
import { prepareProfiles, startChildServer, type ChildServer } from './support/server-child.ts';
import { waitUntil } from './support/wait-until.ts';

// A profile whose tools run without approval, so the kill lands inside the tool.
const workerProfile = `---\nid: worker\nname: Worker\ntools: [terminal, scratchpad]\n---\nYou run commands.\n`;

let dataDir: string;
let llm: ScriptedLlm;
let child: ChildServer | undefined;

beforeEach(async () => {
  dataDir = await mkdtemp(path.join(tmpdir(), 'hearth-crash-'));
  await prepareProfiles(dataDir, { worker: workerProfile });
});
afterEach(async () => {
  await child?.kill();
  await llm?.close();
  child = undefined;
  await rm(dataDir, { recursive: true, force: true });
});
// Registered after the hook above, so the app is closed first (hooks run last-registered first).
const startApp = useHearth();

function backendEnvironment(backend: 'ollama' | 'openai'): Record<string, string> {
  return backend === 'ollama'
    ? { LLM_BACKEND: 'ollama', OLLAMA_HOST: llm.url }
    : { LLM_BACKEND: 'openai', OLLAMA_HOST: 'http://127.0.0.1:9', OPENAI_BASE_URL: llm.url, OPENAI_MODEL: 'scripted-model' };
}

/** The same data folder, now served in this process (the restart path is createDependencies either way). */
async function restart(backend: 'ollama' | 'openai', env: Record<string, string> = {}): Promise<Hearth> {
  return startApp({ backend, dataDir, llm, env: { PROFILES_DIR: path.join(dataDir, 'profiles'), ...env } });
}

function integrity(): string {
  const database = new Database(path.join(dataDir, 'hearth.db'), { readonly: true });
  try {
    return String(database.pragma('integrity_check', { simple: true }));
  } finally {
    database.close();
  }
}

/** The answer pieces kept so far, of one session or of all. */
function countDrafts(sessionId?: string): number {
  const database = new Database(path.join(dataDir, 'hearth.db'), { readonly: true });
  try {
    const statement = database.prepare(`SELECT count(*) AS count FROM answer_drafts${sessionId === undefined ? '' : ' WHERE session_id = ?'}`).pluck();
    return Number(sessionId === undefined ? statement.get() : statement.get(sessionId));
  } finally {
    database.close();
  }
}

/** The messages of a request as role and, for tools, the call they answer: what both backends need to be valid. */
function callStructure(request: RecordedRequest): string[] {
  return request.body.messages.map((message: any) => {
    const calls = message.tool_calls?.map((call: any) => call.function?.name ?? call.name).join(',');
    return calls ? `${message.role}:${calls}` : message.role;
  });
}

for (const backend of ['ollama', 'openai'] as const) {
  describe(`a server killed with SIGKILL (${backend})`, () => {
    beforeEach(async () => {
      llm = backend === 'ollama' ? await startScriptedOllama() : await startScriptedOpenAI();
    });

    // One server killed with a run in each of two sessions, one mid-tool and one mid-answer, and
    // brought back once: each session's checks are those it would have alone.
    it('mid-tool: the call was stored before it ran, gets an "interrupted" result, and the context stays valid; mid-answer: the earlier messages are untouched, the answer so far is kept and marked, and the next turn works', async () => {
      child = await startChildServer(dataDir, backendEnvironment(backend));
      const answering = (await child.request('POST', '/sessions', {})).body.session_id;
      llm.script({ content: 'An earlier answer.' });
      expect((await child.request('POST', `/sessions/${answering}/messages`, { content: 'First question' })).status).toBe(200);
      const before = (await child.request('GET', `/sessions/${answering}`)).body.messages;

      const working = (await child.request('POST', '/sessions', { profile_id: 'worker' })).body.session_id;
      const folder = path.join(dataDir, 'session-files', working);
      llm.script({
        toolCalls: [
          { name: 'scratchpad', arguments: { action: 'write', section: 'plan', content: 'touch two files' } },
          { name: 'terminal', arguments: { command: 'touch started; sleep 30; touch finished' } },
        ],
      });
      const workingSocket = await child.connect(working);
      workingSocket.send({ type: 'message', content: 'Run the long command' });
      await waitUntil(() => existsSync(path.join(folder, 'started')), 20_000);
      const stored = (await child.request('GET', `/sessions/${working}`)).body.messages;
      expect(stored.map((message: any) => message.role)).toEqual(['user', 'assistant', 'tool']);

      // The tool's run asks the LLM nothing more while its command sleeps: the next request is this one.
      // Pieces of about 128 characters fill a draft (4 KiB) in some 30 pieces instead of 500.
      llm.script({ chunkCount: 100_000, chunkText: (index) => `word${index} `.repeat(16), delayMs: 2 });
      const answeringSocket = await child.connect(answering);
      answeringSocket.send({ type: 'message', content: 'Write at length' });
      await waitUntil(() => countDrafts(answering) >= 2, 20_000);
      await child.kill();
      const seen = answeringSocket.ofType('stream_delta').map((event) => event.delta).join('');
      answeringSocket.close();
      workingSocket.close();
      expect(integrity()).toBe('ok');

      const server = await restart(backend);
      const after = (await server.request('GET', `/sessions/${answering}`)).body;
      expect(after.running).toBe(false);
      expect(after.messages.slice(0, before.length)).toEqual(before);
      const [question, answer, ...rest] = after.messages.slice(before.length);
      expect(rest).toEqual([]);
      expect(question).toMatchObject({ role: 'user', content: 'Write at length' });
      expect(answer).toMatchObject({ role: 'assistant', interrupted: true });
      expect(answer.content.length).toBeGreaterThan(0);
      expect(seen.startsWith(answer.content)).toBe(true);
      expect(countDrafts()).toBe(0);

      const messages = (await server.request('GET', `/sessions/${working}/context`)).body.messages;
      expect(messages.map((message: any) => message.role)).toEqual(['user', 'assistant', 'tool', 'tool', 'assistant']);
      const [, call, first, second, closing] = messages;
      expect(first).toMatchObject({ tool_call_id: call.tool_calls[0].id, success: true });
      expect(second).toMatchObject({ tool_call_id: call.tool_calls[1].id, name: 'terminal', content: interruptedCallResult, success: false });
      expect(closing).toMatchObject({ role: 'assistant', content: '', interrupted: true });

      llm.script({ content: 'Back again.' });
      expect((await server.request('POST', `/sessions/${answering}/messages`, { content: 'Still there?' })).body.content).toBe('Back again.');
      const roles = llm.requests.at(-1)!.body.messages.map((message: any) => message.role);
      expect(roles).toEqual(['system', 'user', 'assistant', 'user', 'assistant', 'user']);

      llm.script({ content: 'It was cut off; I will check.' });
      await server.request('POST', `/sessions/${working}/messages`, { content: 'What happened?' });
      expect(callStructure(llm.requests.at(-1)!)).toEqual(['system', 'user', 'assistant:scratchpad,terminal', 'tool', 'tool', 'assistant', 'user']);
      // What two tests of 20 s each did.
    }, 40_000);
  });
}

describe('a server killed with SIGKILL mid-compression', () => {
  it('keeps every message as it was, and the next turn compresses after all', async () => {
    llm = await startScriptedOllama();
    const isSummariser = (request: RecordedRequest) => String(request.body?.messages?.[0]?.content ?? '').startsWith('You condense the earlier part');
    let hangSummaries = true;
    llm.respondWith((request) => {
      if (isSummariser(request)) return hangSummaries ? { silent: true } : { content: '- Three short questions were asked.' };
      return { content: 'Noted.', usage: { promptTokens: 3_240, completionTokens: 10 } };
    });
    const smallWindow = { OLLAMA_NUM_CTX: '4096', CONTEXT_KEEP_RECENT: '2' };
    const environment = { ...backendEnvironment('ollama'), ...smallWindow };
    child = await startChildServer(dataDir, environment);
    const sessionId = (await child.request('POST', '/sessions', {})).body.session_id;
    for (let turn = 1; turn <= 3; turn++) await child.request('POST', `/sessions/${sessionId}/messages`, { content: `Short question ${turn}` });
    const display = (await child.request('GET', `/sessions/${sessionId}`)).body.messages;
    const context = (await child.request('GET', `/sessions/${sessionId}/context`)).body.messages;

    const socket = await child.connect(sessionId);
    socket.send({ type: 'message', content: `A longer question: ${'please look at the attached notes again '.repeat(8)}` });
    await waitUntil(() => llm.requests.some(isSummariser), 20_000);
    await child.kill();
    socket.close();
    expect(integrity()).toBe('ok');

    hangSummaries = false;
    const server = await restart('ollama', smallWindow);
    expect((await server.request('GET', `/sessions/${sessionId}`)).body.messages.slice(0, display.length)).toEqual(display);
    expect((await server.request('GET', `/sessions/${sessionId}/context`)).body.messages.slice(0, context.length)).toEqual(context);
    await server.request('POST', `/sessions/${sessionId}/messages`, { content: `Once more: ${'please look at the attached notes again '.repeat(8)}` });
    expect((await server.request('GET', `/sessions/${sessionId}/context`)).body.messages[0]).toMatchObject({ is_summary: true });
  });
});
