import { rm } from 'node:fs/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { startHearth, type Hearth, useHearth } from './support/hearth-server.ts';
import { unusedPort } from './support/llm-helpers.ts';
import { startScriptedOllama } from './support/scripted-ollama.ts';
import { startScriptedOpenAI } from './support/scripted-openai.ts';

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(closers.splice(0).map((close) => close()));
});
// Registered after the hook above, so the apps are closed before their LLMs (hooks run last-registered first).
const hearthWith = useHearth();

/** Pins a model, sends a message, and answers with the model the LLM request carried. */
async function modelOfNextRequest(hearth: Hearth, sessionId: string): Promise<string> {
  hearth.llm.script({ content: 'Answered.' });
  const before = hearth.llm.requests.length;
  const answered = await hearth.request('POST', `/sessions/${sessionId}/messages`, { content: 'Hello' });
  expect(answered.status, JSON.stringify(answered.body)).toBe(200);
  return hearth.llm.requests.slice(before).find((request) => Array.isArray(request.body?.messages))!.body.model;
}

describe.each([
  { backend: 'ollama' as const, start: () => startScriptedOllama({ models: ['qwen3:8b', 'llama3.2:3b'] }), profileModel: 'fake:latest' },
  { backend: 'openai' as const, start: () => startScriptedOpenAI({ models: ['qwen3:8b', 'llama3.2:3b'] }), profileModel: 'scripted-model' },
])('the model picker against $backend', ({ backend, start, profileModel }) => {
  it('GET /models lists what the backend offers; PATCH {model} pins it for the next turns, remembered; null returns to the profile\'s', async () => {
    const llm = await start();
    closers.push(() => llm.close());
    const hearth = await hearthWith({ backend, llm, env: backend === 'ollama' ? { OLLAMA_DEFAULT_MODEL: 'fake:latest' } : {} });

    const listed = await hearth.request('GET', '/models');
    expect(listed.status).toBe(200);
    expect(listed.body.backend).toBe(backend);
    const names = listed.body.models.map((model: { name: string }) => model.name);
    expect(names).toEqual(expect.arrayContaining(['qwen3:8b', 'llama3.2:3b']));
    if (backend === 'ollama') expect(listed.body.models[0].size).toBe(1_000_000_000);

    const sessionId = await hearth.createSession();
    expect((await hearth.request('GET', `/sessions/${sessionId}`)).body.model).toBeNull();
    expect(await modelOfNextRequest(hearth, sessionId)).toBe(profileModel);

    const pinned = await hearth.request('PATCH', `/sessions/${sessionId}`, { model: 'llama3.2:3b' });
    expect(pinned.status).toBe(200);
    expect(pinned.body.model).toBe('llama3.2:3b');
    expect((await hearth.request('GET', `/sessions/${sessionId}`)).body.model).toBe('llama3.2:3b');
    expect(await modelOfNextRequest(hearth, sessionId)).toBe('llama3.2:3b');

    expect((await hearth.request('PATCH', `/sessions/${sessionId}`, { model: null })).body.model).toBeNull();
    expect(await modelOfNextRequest(hearth, sessionId)).toBe(profileModel);

    expect((await hearth.request('PATCH', `/sessions/${sessionId}`, { model: '' })).status).toBe(400);
    expect((await hearth.request('PATCH', `/sessions/${sessionId}`, { model: 7 })).status).toBe(400);
  });
});

describe('the model picker, remembered and failing', () => {
  it('a pinned model survives a restart', async () => {
    const llm = await startScriptedOllama();
    closers.push(() => llm.close());
    const first = await startHearth({ llm, env: { OLLAMA_DEFAULT_MODEL: 'fake:latest' } });
    const sessionId = await first.createSession();
    await first.request('PATCH', `/sessions/${sessionId}`, { model: 'qwen3:8b' });
    const port = Number(new URL(first.baseUrl).port);
    await first.app.close();
    const second = await hearthWith({ llm, dataDir: first.dataDir, port, env: { OLLAMA_DEFAULT_MODEL: 'fake:latest' } });
    closers.push(() => rm(first.dataDir, { recursive: true, force: true }));
    expect((await second.request('GET', `/sessions/${sessionId}`)).body.model).toBe('qwen3:8b');
    expect(await modelOfNextRequest(second, sessionId)).toBe('qwen3:8b');
  });

  it('GET /models says 502 llm_unreachable, with the fix, when the backend does not answer', async () => {
    const hearth = await hearthWith({ env: { OLLAMA_HOST: `http://127.0.0.1:${await unusedPort()}` } });
    const listed = await hearth.request('GET', '/models');
    expect(listed.status).toBe(502);
    expect(listed.body.error.code).toBe('llm_unreachable');
    expect(listed.body.error.message).toContain('OLLAMA_HOST');
  });
});
