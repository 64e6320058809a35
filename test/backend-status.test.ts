import { once } from 'node:events';
import { createServer, type AddressInfo, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { BackendStatusMonitor, type BackendStatus } from '../src/llm/backend-status.ts';
import { sameOllamaModel } from '../src/llm/backend-probe.ts';
import { EventSocket } from './support/event-socket.ts';
import { startHearth, type Hearth } from './support/hearth-server.ts';
import { unusedPort } from './support/llm-helpers.ts';
import { closeServers, serve } from './support/loopback-http.ts';
import type { ScriptedLlm } from './support/scripted-llm.ts';
import { startScriptedOllama } from './support/scripted-ollama.ts';
import { startScriptedOpenAI } from './support/scripted-openai.ts';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  closeServers();
});

async function scriptedOllama(port?: number): Promise<ScriptedLlm> {
  const llm = await startScriptedOllama(port === undefined ? {} : { port });
  cleanups.push(() => llm.close());
  return llm;
}

function monitor(...args: ConstructorParameters<typeof BackendStatusMonitor>): BackendStatusMonitor {
  const created = new BackendStatusMonitor(...args);
  cleanups.push(() => created.stop());
  return created;
}

/** The next `changed` report of a monitor that says the backend is (or is not) reachable. */
function nextChange(watched: BackendStatusMonitor, reachable: boolean): Promise<BackendStatus> {
  return new Promise((resolve) => {
    const listener = (status: BackendStatus) => {
      if (status.reachable !== reachable) return;
      watched.off('changed', listener);
      resolve(status);
    };
    watched.on('changed', listener);
  });
}

describe('backend status checks', () => {
  it('matches an Ollama model by name and tag, a bare name meaning :latest', () => {
    expect(sameOllamaModel('qwen3:8b', 'qwen3:8b')).toBe(true);
    expect(sameOllamaModel('llama3:latest', 'llama3')).toBe(true);
    expect(sameOllamaModel('qwen3:14b', 'qwen3:8b')).toBe(false);
    expect(sameOllamaModel('qwen3:8b', 'qwen3')).toBe(false);
  });

  it('finds a pulled Ollama model reachable and available', async () => {
    const llm = await scriptedOllama();
    const status = await monitor({ backend: 'ollama', model: 'fake', url: llm.url }).check();
    expect(status).toMatchObject({ backend: 'ollama', model: 'fake', url: llm.url, reachable: true, model_available: true });
    expect(status.fix).toBeUndefined();
    expect(Date.parse(status.checked_at!)).not.toBeNaN();
  });

  it('says which command pulls a model Ollama does not have', async () => {
    const llm = await scriptedOllama();
    const status = await monitor({ backend: 'ollama', model: 'qwen3:8b', url: llm.url }).check();
    expect(status).toMatchObject({ reachable: true, model_available: false, fix: 'Run `ollama pull qwen3:8b`' });
    expect(status.message).toContain('qwen3:8b');
  });

  it('says how to start Ollama when nothing listens at OLLAMA_HOST', async () => {
    const url = `http://127.0.0.1:${await unusedPort()}`;
    const status = await monitor({ backend: 'ollama', model: 'qwen3:8b', url }).check();
    expect(status).toMatchObject({ reachable: false, model_available: false, fix: 'Start Ollama (`ollama serve`) or set OLLAMA_HOST' });
    expect(status.message).toContain('ECONNREFUSED');
  });

  it('lists an OpenAI-compatible endpoint\'s models with the key, and names the ones it offers when the model is not among them', async () => {
    const llm = await startScriptedOpenAI();
    cleanups.push(() => llm.close());
    expect(await monitor({ backend: 'openai', model: 'fake', url: llm.url, apiKey: 'k' }).check()).toMatchObject({ reachable: true, model_available: true });
    const missing = await monitor({ backend: 'openai', model: 'gpt-9', url: llm.url, apiKey: 'k' }).check();
    expect(missing).toMatchObject({ reachable: true, model_available: false, fix: 'Set OPENAI_MODEL to one it offers: fake' });

    const url = `http://127.0.0.1:${await unusedPort()}/v1`;
    const unreachable = await monitor({ backend: 'openai', model: 'fake', url, apiKey: 'k' }).check();
    expect(unreachable).toMatchObject({ reachable: false, fix: 'Check OPENAI_BASE_URL and OPENAI_API_KEY' });
  });

  it('sends OPENAI_API_KEY and reports a refused key', async () => {
    const seen: (string | undefined)[] = [];
    const url = await serve((request, response) => {
      seen.push(request.headers.authorization);
      const allowed = request.headers.authorization === 'Bearer right';
      response.writeHead(allowed ? 200 : 401, { 'content-type': 'application/json' });
      response.end(JSON.stringify(allowed ? { data: [{ id: 'm' }] } : { error: { message: 'bad key' } }));
    });
    expect(await monitor({ backend: 'openai', model: 'm', url: `${url}/v1`, apiKey: 'right' }).check()).toMatchObject({ reachable: true, model_available: true });
    const refused = await monitor({ backend: 'openai', model: 'm', url: `${url}/v1`, apiKey: 'wrong' }).check();
    expect(refused).toMatchObject({ reachable: false, fix: 'Check OPENAI_BASE_URL and OPENAI_API_KEY' });
    expect(refused.message).toContain('401');
    expect(seen).toEqual(['Bearer right', 'Bearer wrong']);
  });

  it('checks again on its own every interval and reports only changes', async () => {
    const llm = await startScriptedOllama();
    const port = Number(new URL(llm.url).port);
    const watched = monitor({ backend: 'ollama', model: 'fake', url: llm.url }, { intervalMs: 30 });
    const reports: BackendStatus[] = [];
    watched.on('changed', (status) => reports.push(status));
    const first = nextChange(watched, true);
    watched.start();
    await first;
    const gone = nextChange(watched, false);
    await llm.close();
    expect(await gone).toMatchObject({ model_available: false, fix: 'Start Ollama (`ollama serve`) or set OLLAMA_HOST' });
    const back = nextChange(watched, true);
    await scriptedOllama(port);
    expect(await back).toMatchObject({ model_available: true });
    // Only changes are reported, though every interval checks: one report while up, then while down (its reason may vary), then up.
    const findings = reports.map((status) => `${status.reachable} ${status.message}`);
    expect(findings.filter((finding, index) => finding === findings[index - 1])).toEqual([]);
    expect(reports[0]!.reachable).toBe(true);
    expect(reports.at(-1)!.reachable).toBe(true);
    expect(reports.slice(1, -1).every((status) => status.reachable === false)).toBe(true);
  });
});

describe('backend status in the server', () => {
  let hearth: Hearth;

  it('GET /status and the hello frame carry it; backend_status follows the backend going away and coming back', async () => {
    const llm = await scriptedOllama();
    hearth = await startHearth({ llm, env: { OLLAMA_DEFAULT_MODEL: 'fake' } });
    cleanups.push(() => hearth.close());
    await hearth.app.backendStatus.firstCheck();
    const { status, body } = await hearth.request('GET', '/status');
    expect(status).toBe(200);
    expect(body.backend).toMatchObject({ backend: 'ollama', model: 'fake', url: llm.url, reachable: true, model_available: true });

    const events = await EventSocket.connect(`${hearth.baseUrl.replace('http', 'ws')}/ws/events`);
    cleanups.push(() => events.close());
    const next = (type: string) => events.nextMatching((event) => (event as { type: string }).type === type, type) as unknown as Promise<any>;
    expect((await next('hello')).backend).toEqual(body.backend);

    await llm.close();
    void hearth.app.backendStatus.check();
    const gone = await next('backend_status');
    expect(gone.backend).toMatchObject({ reachable: false, model_available: false, fix: 'Start Ollama (`ollama serve`) or set OLLAMA_HOST' });
    expect((await hearth.request('GET', '/status')).body.backend).toEqual(gone.backend);

    await scriptedOllama(Number(new URL(llm.url).port));
    void hearth.app.backendStatus.check();
    expect((await next('backend_status')).backend).toMatchObject({ reachable: true, model_available: true });
  });

  it('follows each call between checks: a call that cannot reach the backend marks it unreachable at once, an answered call reachable', async () => {
    const llm = await scriptedOllama();
    const port = Number(new URL(llm.url).port);
    hearth = await startHearth({ llm, env: { OLLAMA_DEFAULT_MODEL: 'fake' } });
    cleanups.push(() => hearth.close());
    await hearth.app.backendStatus.firstCheck();
    expect(hearth.app.backendStatus.current().reachable).toBe(true);
    const events = await EventSocket.connect(`${hearth.baseUrl.replace('http', 'ws')}/ws/events`);
    cleanups.push(() => events.close());
    const next = () => events.nextMatching((event) => (event as { type: string }).type === 'backend_status', 'backend_status') as unknown as Promise<any>;
    const sessionId = await hearth.createSession();

    await llm.close();
    const gone = next();
    const failed = await hearth.request('POST', `/sessions/${sessionId}/messages`, { content: 'Hello?' });
    expect(failed.body.error?.code ?? failed.body.error).toBeTruthy();
    expect((await gone).backend).toMatchObject({ reachable: false, fix: 'Start Ollama (`ollama serve`) or set OLLAMA_HOST' });
    expect((await gone).backend.message).toContain('ECONNREFUSED');

    const back = await scriptedOllama(port);
    back.script({ content: 'Here again.' });
    const reachable = next();
    expect((await hearth.request('POST', `/sessions/${sessionId}/messages`, { content: 'Hello?' })).body.content).toBe('Here again.');
    expect((await reachable).backend).toMatchObject({ reachable: true, model_available: true });
  });

  it('never holds up start-up or /health: a backend that never answers is still "not checked"', async () => {
    const held: Socket[] = [];
    const silent = createServer((socket) => held.push(socket));
    silent.listen(0, '127.0.0.1');
    await once(silent, 'listening');
    cleanups.push(() => {
      for (const socket of held) socket.destroy();
      silent.close();
    });
    const url = `http://127.0.0.1:${(silent.address() as AddressInfo).port}`;
    hearth = await startHearth({ env: { OLLAMA_HOST: url } });
    cleanups.push(() => hearth.close());
    expect((await hearth.request('GET', '/health')).status).toBe(200);
    expect((await hearth.request('GET', '/status')).body.backend).toMatchObject({ url, reachable: null, model_available: null, checked_at: null });
  });
});
