import { afterEach, describe, expect, it } from 'vitest';
import { createOllamaBackend } from '../src/llm/ollama.ts';
import { createOpenAIBackend } from '../src/llm/openai.ts';
import type { LlmBackend } from '../src/llm/types.ts';
import { chatRequest, joined, readAll } from './support/llm-helpers.ts';
import type { ScriptedLlm } from './support/scripted-llm.ts';
import { startScriptedOllama } from './support/scripted-ollama.ts';
import { startScriptedOpenAI } from './support/scripted-openai.ts';
import { useHearth } from './support/hearth-server.ts';

const stallTimeoutMs = 200;

const backends: Record<'ollama' | 'openai', { start: () => Promise<ScriptedLlm>; create: (url: string) => LlmBackend }> = {
  ollama: { start: startScriptedOllama, create: (url) => createOllamaBackend({ host: url, defaultModel: 'fake', stallTimeoutMs }) },
  openai: {
    start: startScriptedOpenAI,
    create: (url) => createOpenAIBackend({ baseUrl: url, apiKey: '', defaultModel: 'fake', stallTimeoutMs }),
  },
};

let server: ScriptedLlm | undefined;
const startApp = useHearth();
afterEach(async () => {
  await server?.close();
  server = undefined;
});

for (const [name, { start, create }] of Object.entries(backends)) {
  describe(`a backend that goes quiet (${name})`, () => {
    it('before its headers: the call ends with llm_timeout and the request is cancelled', async () => {
      server = await start();
      server.script({ silent: true });
      const events = await readAll(create(server.url).stream(chatRequest('fake')));
      expect(events).toEqual([{ type: 'error', error: { code: 'llm_timeout', message: expect.stringMatching(/sent nothing for 0 s.*LLM_STALL_TIMEOUT_S/) } }]);
      expect((await server.waitForDisconnect()).disconnected).toBe(true);
    });

    it('mid-stream: what arrived is passed on, then llm_timeout', async () => {
      server = await start();
      server.script({ content: 'The first half', hang: true });
      const events = await readAll(create(server.url).stream(chatRequest('fake')));
      expect(joined(events, 'text_delta')).toBe('The first half');
      expect(events.at(-1)).toMatchObject({ type: 'error', error: { code: 'llm_timeout' } });
    });

    it('a slow but steady stream is not a stall', async () => {
      server = await start();
      server.script({ content: 'one two three four five six', chunkSize: 4, delayMs: stallTimeoutMs / 3 });
      const events = await readAll(create(server.url).stream(chatRequest('fake')));
      expect(joined(events, 'text_delta')).toBe('one two three four five six');
      expect(events.at(-1)).toMatchObject({ type: 'done' });
    });

    it('a stop before the stall still reads as a stop', async () => {
      server = await start();
      server.script({ silent: true });
      const controller = new AbortController();
      const reading = readAll(create(server.url).stream(chatRequest('fake', { signal: controller.signal })));
      await server.waitForRequest(1);
      controller.abort();
      expect((await reading).at(-1)).toMatchObject({ type: 'error', error: { code: 'aborted' } });
    });

    it('whole completions (planning, summaries, extraction) time out the same way', async () => {
      server = await start();
      server.script({ silent: true });
      const result = await create(server.url).complete(chatRequest('fake'));
      expect(result).toMatchObject({ ok: false, error: { code: 'llm_timeout' } });
    });
  });
}

describe('a turn whose backend goes quiet', () => {
  for (const backend of ['ollama', 'openai'] as const) {
    it(`ends with an llm_timeout error, keeps the partial answer, and frees the session (${backend})`, async () => {
      const hearth = await startApp({ backend, env: { LLM_STALL_TIMEOUT_S: '1' } });
      hearth.llm.script({ content: 'Partly written', hang: true });
      const sessionId = await hearth.createSession();
      const socket = await hearth.connect(sessionId);
      socket.send({ type: 'message', content: 'Write something' });
      // Over REST, in another session stalling at the same time: the same timeout answers 504.
      await hearth.llm.waitForRequest(1);
      hearth.llm.script({ silent: true });
      const rest = hearth.request('POST', `/sessions/${await hearth.createSession()}/messages`, { content: 'Also' });
      expect(await socket.next('error', 5_000)).toMatchObject({ code: 'llm_timeout', message: expect.stringMatching(/sent nothing for 1 s/) });
      await socket.next('session_sync');
      const { body } = await hearth.request('GET', `/sessions/${sessionId}`);
      expect(body.messages.at(-1)).toMatchObject({ role: 'assistant', content: 'Partly written' });
      expect(await rest).toMatchObject({ status: 504, body: { error: { code: 'llm_timeout' } } });

      // The session is free: its next message runs.
      hearth.llm.script({ content: 'Here again' });
      socket.send({ type: 'message', content: 'Again' });
      expect((await socket.next('stream_end', 5_000)).content).toBe('Here again');
      socket.close();
    });
  }
});

describe('a malformed Ollama stream', () => {
  it('fails with llm_error naming the bad line, keeping what came before, instead of dropping it without a word', async () => {
    const { createServer } = await import('node:http');
    const lines = [
      JSON.stringify({ model: 'fake', message: { role: 'assistant', content: 'Before ' }, done: false }),
      '{"model":"fake","message":{"role":"assistant","content":"lost',
      JSON.stringify({ model: 'fake', message: { role: 'assistant', content: 'after' }, done: true }),
    ];
    const broken = createServer((_request, response) => {
      response.writeHead(200, { 'content-type': 'application/x-ndjson' });
      response.write(`${lines[0]}\n`);
      setImmediate(() => response.end(`${lines[1]}\n${lines[2]}\n`));
    });
    await new Promise<void>((resolve) => broken.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = broken.address() as import('node:net').AddressInfo;
      const backend = createOllamaBackend({ host: `http://127.0.0.1:${port}`, defaultModel: 'fake', stallTimeoutMs: 10_000 });
      const events = await readAll(backend.stream(chatRequest('fake')));
      expect(joined(events, 'text_delta')).toBe('Before ');
      expect(events.at(-1)).toEqual({
        type: 'error',
        error: { code: 'llm_error', message: expect.stringMatching(/^Ollama sent a line that is not JSON.*"content":"lost$/) },
      });
    } finally {
      broken.closeAllConnections();
      await new Promise((resolve) => broken.close(resolve));
    }
  });
});
