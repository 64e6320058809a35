import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { useHearth } from './support/hearth-server.ts';
import type { ScriptedLlm } from './support/scripted-llm.ts';
import { startScriptedOllama } from './support/scripted-ollama.ts';
import { prepareProfiles, startChildServer, type ChildServer } from './support/server-child.ts';

let child: ChildServer | undefined;
let llm: ScriptedLlm | undefined;
let dataDir: string | undefined;
afterEach(async () => {
  await child?.kill();
  await llm?.close();
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
  child = llm = dataDir = undefined;
});
// Registered after the hook above, so the app is closed first (hooks run last-registered first).
const start = useHearth();

describe('answer size', () => {
  for (const backend of ['ollama', 'openai'] as const) {
    it(`cuts an answer past MAX_ANSWER_CHARS with a note and ends the backend's request (${backend})`, async () => {
      const hearth = await start({ backend, env: { MAX_ANSWER_CHARS: '5000' } });
      hearth.llm.script({ chunkCount: 1_000_000, chunkText: () => 'x'.repeat(100) });
      const sessionId = await hearth.createSession();
      const socket = await hearth.connect(sessionId);
      socket.send({ type: 'message', content: 'Go on forever' });
      const end = await socket.next('stream_end');
      expect(end.content).toMatch(/^x{5000}\n\n\[The answer was cut here: it passed 5,000 characters \(MAX_ANSWER_CHARS\)\.\]$/);
      expect(end.length).toBe(end.content!.length);
      expect(socket.ofType('stream_delta').map((event) => event.delta).join('')).toBe(end.content);
      await hearth.llm.waitForDisconnect();
      const stored = (await hearth.request('GET', `/sessions/${sessionId}`)).body.messages.at(-1);
      expect(stored.content).toBe(end.content);
      socket.close();
    });
  }

  // How quickly /health answers meanwhile is measured by the bench (scenario 15), not here.
  it('a 100 MB answer is cut at the default 200,000 characters and is not repeated in stream_end', async () => {
    llm = await startScriptedOllama();
    dataDir = await mkdtemp(path.join(tmpdir(), 'hearth-answer-'));
    await prepareProfiles(dataDir);
    child = await startChildServer(dataDir, { OLLAMA_HOST: llm.url });
    const sessionId = (await child.request('POST', '/sessions', {})).body.session_id;
    llm.script({ chunkCount: 100_000, chunkText: () => 'y'.repeat(1_000) });
    const socket = await child.connect(sessionId);
    socket.send({ type: 'message', content: 'Write a hundred megabytes' });
    const end = await socket.next('stream_end', 30_000);
    expect(end.length).toBeLessThan(200_200);
    // Longer than 64 KB: the client has it from the deltas, so the end event does not repeat it.
    expect(end.content).toBeUndefined();
    expect(socket.ofType('stream_delta').reduce((total, event) => total + event.delta.length, 0)).toBe(end.length);
    await llm.waitForDisconnect();
    expect((await child.request('POST', `/sessions/${sessionId}/messages`, { content: 'Short now' })).status).toBe(200);
    socket.close();
  });
});

describe('shutdown', () => {
  it('SIGTERM stops every run with stream_stopped {reason:"shutdown"} before the sockets close', async () => {
    llm = await startScriptedOllama();
    dataDir = await mkdtemp(path.join(tmpdir(), 'hearth-shutdown-'));
    await prepareProfiles(dataDir);
    child = await startChildServer(dataDir, { OLLAMA_HOST: llm.url });
    const sessionId = (await child.request('POST', '/sessions', {})).body.session_id;
    llm.script({ chunkCount: 100_000, chunkText: (index) => `${index} `, delayMs: 5 });
    const socket = await child.connect(sessionId);
    socket.send({ type: 'message', content: 'Talk until I leave' });
    await socket.next('stream_delta');
    process.kill(child.pid, 'SIGTERM');
    const stopped = await socket.next('stream_stopped');
    expect(stopped).toMatchObject({ reason: 'shutdown' });
    await socket.closed();
    const types = socket.types();
    expect(types.indexOf('stream_stopped')).toBe(types.length - 1);
  });
});
