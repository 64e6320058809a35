import { once } from 'node:events';
import { cp, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { AgentEvent } from '../src/protocol/events.ts';
import { EventSocket } from './support/event-socket.ts';
import { useHearth, type Hearth } from './support/hearth-server.ts';
import { OllamaModelLibrary, type LibraryModel } from './support/ollama-model-library.ts';
import { household } from './support/people.ts';
import type { ScriptedLlm } from './support/scripted-llm.ts';
import { startScriptedOllama } from './support/scripted-ollama.ts';

// The models routes (docs/protocol.md, REST API) and their events on a real /ws/events socket,
// one whole server per route, against the Ollama stand-in's model library.

const qwen: LibraryModel = { name: 'qwen3:8b', family: 'qwen3', parameterSize: '8.2B', quantization: 'Q4_K_M', contextLength: 40960, capabilities: ['completion', 'tools', 'thinking'], layers: [5_000_000_000, 11_000, 500] };
const gemma: LibraryModel = { name: 'gemma3:1b', family: 'gemma3', parameterSize: '1B', contextLength: 32768, capabilities: ['completion', 'vision'], layers: [800_000_000, 300] };
const tiny: LibraryModel = { name: 'tiny:1b', layers: [1_000, 10] };

type Frame = AgentEvent & Record<string, any>;

let library: OllamaModelLibrary;
let ollama: ScriptedLlm;
const start = useHearth();

beforeEach(async () => {
  library = new OllamaModelLibrary({ registry: [qwen, tiny], installed: [gemma] });
  ollama = await startScriptedOllama({ library });
});
afterEach(async () => {
  await ollama.close();
});

async function hearthWithModels(env: Record<string, string> = {}): Promise<Hearth> {
  return start({ llm: ollama, env });
}

function eventsOf(hearth: Hearth, headers: Record<string, string> = {}): Promise<EventSocket> {
  return EventSocket.connect(`${hearth.baseUrl.replace('http', 'ws')}/ws/events`, headers);
}

const ofType = (type: string, more: (frame: Frame) => boolean = () => true) => (event: AgentEvent) => event.type === (type as never) && more(event as Frame);
const encoded = (name: string) => encodeURIComponent(name);

describe('GET /models and GET /models/loaded', () => {
  it('list each model with its details, capabilities, whether it is loaded, who uses it and whether it fits', async () => {
    library.load('gemma3:1b', 600_000_000, '2026-11-29T05:00:00.000Z');
    const hearth = await hearthWithModels({ OLLAMA_DEFAULT_MODEL: 'gemma3:1b' });
    const { status, body } = await hearth.request('GET', '/models');
    expect(status).toBe(200);
    expect(body).toMatchObject({ backend: 'ollama', default_model: 'gemma3:1b', gpu: { used: 600_000_000 }, pulls: [] });
    expect(body.memory.total).toBeGreaterThan(body.memory.available);
    expect(body.models).toEqual([
      {
        name: 'gemma3:1b',
        size: 800_000_300,
        family: 'gemma3',
        parameters: '1B',
        quantization: 'Q4_K_M',
        context_length: 32768,
        capabilities: { tools: false, thinking: false, vision: true },
        loaded: { name: 'gemma3:1b', size: 800_000_300, size_vram: 600_000_000, expires_at: '2026-11-29T05:00:00.000Z' },
        // Every shipped profile names no model: they all use the default.
        used_by: ['default', 'secretary', 'server_admin', 'smart_home'],
        fit: expect.stringMatching(/^(fits|tight)$/),
      },
    ]);
    expect(await hearth.request('GET', '/models/loaded')).toEqual({
      status: 200,
      body: { models: [{ name: 'gemma3:1b', size: 800_000_300, size_vram: 600_000_000, expires_at: '2026-11-29T05:00:00.000Z' }] },
    });
  });
});

describe('POST /models/pull', () => {
  it('first run: Ollama up without the default model, the answer says to pull it; one pull later the first answer arrives', async () => {
    const hearth = await hearthWithModels();
    // As Ollama answers a chat for a model it does not have.
    ollama.respondWith((request) =>
      library.has(request.body?.model) ? { content: 'Hello from qwen3' } : { status: 404, errorMessage: `model "${request.body?.model}" not found, try pulling it first` },
    );
    const sessionId = await hearth.createSession();
    const before = await hearth.request('POST', `/sessions/${sessionId}/messages`, { content: 'Hello' });
    expect(before).toMatchObject({ status: 502, body: { error: { code: 'llm_error', message: expect.stringContaining('ollama pull qwen3:8b') } } });
    const socket = await eventsOf(hearth);
    await socket.nextMatching(ofType('hello'));
    expect((await hearth.request('POST', '/models/pull', { name: 'qwen3:8b' })).status).toBe(202);
    await socket.nextMatching(ofType('model_loading', (frame) => frame.state === 'loaded'), 'the model loaded after its pull');
    const after = await hearth.request('POST', `/sessions/${sessionId}/messages`, { content: 'Hello again' });
    expect(after).toMatchObject({ status: 200, body: { content: 'Hello from qwen3' } });
    socket.close();
  });

  it('answers 202 and the progress reaches the events socket as one moving bar, then done, models_changed and the warm-up of the default model', async () => {
    const hearth = await hearthWithModels();
    const socket = await eventsOf(hearth);
    await socket.nextMatching(ofType('hello'));
    library.plan('qwen3:8b', { steps: 3, intervalMs: 30 });
    expect(await hearth.request('POST', '/models/pull', { name: 'qwen3:8b' })).toEqual({ status: 202, body: { name: 'qwen3:8b' } });
    const done = (await socket.nextMatching(ofType('model_pull', (frame) => frame.state !== 'pulling'), 'the pull ending')) as Frame;
    expect(done).toEqual({ type: 'model_pull', name: 'qwen3:8b', status: 'success', completed: 5_000_011_500, total: 5_000_011_500, state: 'done' });
    const progress = socket.events.filter(ofType('model_pull', (frame) => frame.state === 'pulling')) as Frame[];
    expect(progress[0]).toEqual({ type: 'model_pull', name: 'qwen3:8b', status: 'pulling manifest', state: 'pulling' });
    const bar = progress.flatMap((frame) => (frame.completed === undefined ? [] : [frame.completed]));
    expect(bar.length).toBeGreaterThan(1);
    expect(bar).toEqual([...bar].sort((left, right) => left - right));
    await socket.nextMatching(ofType('models_changed'));
    expect(await socket.nextMatching(ofType('model_loading'))).toEqual({ type: 'model_loading', name: 'qwen3:8b', state: 'loading' });
    expect(await socket.nextMatching(ofType('model_loading'))).toEqual({ type: 'model_loading', name: 'qwen3:8b', state: 'loaded' });
    const listed = await hearth.request('GET', '/models');
    expect(listed.body.models.map((model: { name: string }) => model.name).sort()).toEqual(['gemma3:1b', 'qwen3:8b']);
    expect((await hearth.request('GET', '/status')).body.backend).toMatchObject({ model: 'qwen3:8b', model_available: true });
    socket.close();
  });

  it('a second pull of the same name while it runs is 409 pull_running; a malformed name is 400', async () => {
    const hearth = await hearthWithModels();
    library.plan('tiny:1b', { holdAfter: 2 });
    const held = once(library, 'held');
    expect((await hearth.request('POST', '/models/pull', { name: 'tiny:1b' })).status).toBe(202);
    await held;
    expect(await hearth.request('POST', '/models/pull', { name: 'tiny:1b' })).toMatchObject({ status: 409, body: { error: { code: 'pull_running' } } });
    expect(await hearth.request('POST', '/models/pull', { name: '../../etc/passwd' })).toMatchObject({ status: 400, body: { error: { code: 'invalid_request' } } });
    library.release('tiny:1b');
  });

  it('a pull that fails mid-way says why on the socket, and the list stays as it was', async () => {
    const hearth = await hearthWithModels();
    const socket = await eventsOf(hearth);
    await socket.nextMatching(ofType('hello'));
    library.plan('qwen3:8b', { failAfter: { lines: 3, error: 'write /usr/share/ollama/.ollama/models/blobs/sha256-abc-partial-0: no space left on device' } });
    await hearth.request('POST', '/models/pull', { name: 'qwen3:8b' });
    const failed = (await socket.nextMatching(ofType('model_pull', (frame) => frame.state !== 'pulling'))) as Frame;
    expect(failed).toMatchObject({ name: 'qwen3:8b', state: 'failed', error: expect.stringMatching(/^Not enough disk space for qwen3:8b \(Ollama: write .*no space left on device\)\.$/) });
    await hearth.request('POST', '/models/pull', { name: 'nothing-here:3b' });
    const unknown = (await socket.nextMatching(ofType('model_pull', (frame) => frame.state !== 'pulling'))) as Frame;
    expect(unknown).toEqual({ type: 'model_pull', name: 'nothing-here:3b', status: 'pulling manifest', state: 'failed', error: 'Ollama has no model named nothing-here:3b.' });
    expect(socket.events.filter(ofType('models_changed'))).toEqual([]);
    expect((await hearth.request('GET', '/models')).body.models.map((model: { name: string }) => model.name)).toEqual(['gemma3:1b']);
    socket.close();
  });
});

describe('DELETE /models/pulls/:name', () => {
  it('a page opened mid-pull gets the pull in hello; a cancel ends it as cancelled and closes the download; again → 404', async () => {
    const hearth = await hearthWithModels();
    const first = await eventsOf(hearth);
    await first.nextMatching(ofType('hello'));
    library.plan('hf.co/someone/Tiny-GGUF:Q4_K_M', { holdAfter: 3 });
    library.plan('tiny:1b', { holdAfter: 3 });
    const held = once(library, 'held');
    await hearth.request('POST', '/models/pull', { name: 'tiny:1b' });
    await held;
    await first.nextMatching(ofType('model_pull', (frame) => frame.completed !== undefined));
    const reloaded = await eventsOf(hearth);
    const hello = (await reloaded.nextMatching(ofType('hello'))) as Frame;
    expect(hello.model_pulls).toEqual([{ name: 'tiny:1b', status: expect.stringMatching(/^pulling /), completed: 250, total: 1_000, state: 'pulling' }]);
    expect((await hearth.request('GET', '/models')).body.pulls).toEqual(hello.model_pulls);
    const closed = once(library, 'closed');
    expect(await hearth.request('DELETE', `/models/pulls/${encoded('tiny:1b')}`)).toEqual({ status: 200, body: { cancelled: true } });
    expect(await closed).toEqual(['tiny:1b', true]);
    for (const socket of [first, reloaded]) {
      expect(await socket.nextMatching(ofType('model_pull', (frame) => frame.state !== 'pulling'))).toMatchObject({ name: 'tiny:1b', state: 'cancelled' });
    }
    expect(await hearth.request('DELETE', `/models/pulls/${encoded('tiny:1b')}`)).toMatchObject({ status: 404, body: { error: { code: 'not_found' } } });
    expect(library.has('tiny:1b')).toBe(false);
    // A name with slashes, URL-encoded as one segment, and as long as a name may be.
    const longName = `hf.co/someone/${'Tiny-GGUF-'.repeat(17)}x:Q4_K_M`;
    expect(longName.length).toBeGreaterThan(180);
    for (const name of ['hf.co/someone/Tiny-GGUF:Q4_K_M', longName]) {
      library.add({ name, layers: [1_000] });
      library.plan(name, { holdAfter: 1 });
      const waiting = once(library, 'held');
      expect((await hearth.request('POST', '/models/pull', { name })).status).toBe(202);
      await waiting;
      expect(await hearth.request('DELETE', `/models/pulls/${encoded(name)}`)).toEqual({ status: 200, body: { cancelled: true } });
      expect(await first.nextMatching(ofType('model_pull', (frame) => frame.name === name && frame.state !== 'pulling'))).toMatchObject({ state: 'cancelled' });
    }
    first.close();
    reloaded.close();
  });
});

describe('DELETE /models/:name', () => {
  it('deletes the model (204, models_changed), and an unknown one is 404 model_not_found', async () => {
    const hearth = await hearthWithModels();
    const socket = await eventsOf(hearth);
    await socket.nextMatching(ofType('hello'));
    expect(await hearth.request('DELETE', `/models/${encoded('gemma3:1b')}`)).toEqual({ status: 204, body: undefined });
    await socket.nextMatching(ofType('models_changed'));
    expect(library.has('gemma3:1b')).toBe(false);
    expect(await hearth.request('DELETE', `/models/${encoded('gemma3:1b')}`)).toMatchObject({ status: 404, body: { error: { code: 'model_not_found', message: 'Ollama has no model named gemma3:1b.' } } });
    socket.close();
  });
});

describe('PUT /models/default', () => {
  it('makes a pulled model the default: the list, /status and the profiles follow, it is loaded ahead, and it is kept across a restart', async () => {
    const dataDir = await mkdtemp(path.join(tmpdir(), 'hearth-default-model-'));
    try {
      const hearth = await start({ llm: ollama, dataDir });
      const socket = await eventsOf(hearth);
      await socket.nextMatching(ofType('hello'));
      expect(await hearth.request('PUT', '/models/default', { name: 'gemma3:1b' })).toEqual({ status: 200, body: { default_model: 'gemma3:1b' } });
      await socket.nextMatching(ofType('models_changed'));
      expect(await socket.nextMatching(ofType('model_loading', (frame) => frame.state !== 'loading'))).toMatchObject({ name: 'gemma3:1b', state: 'loaded' });
      expect((await hearth.request('GET', '/status')).body.backend.model).toBe('gemma3:1b');
      expect((await hearth.request('GET', '/agents/profiles')).body.profiles.map((profile: { model: string }) => profile.model)).toEqual(['gemma3:1b', 'gemma3:1b', 'gemma3:1b']);
      expect(await hearth.request('PUT', '/models/default', { name: 'qwen3:8b' })).toMatchObject({ status: 404, body: { error: { code: 'model_not_found' } } });
      socket.close();
      await hearth.close();
      const again = await start({ llm: ollama, dataDir });
      expect((await again.request('GET', '/models')).body.default_model).toBe('gemma3:1b');
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  });
});

describe('PATCH /agents/profiles/:id', () => {
  it("writes the model into the profile's file under DATA_DIR/profiles, leaves the shipped file, and refuses a model that cannot call tools", async () => {
    const shipped = await mkdtemp(path.join(tmpdir(), 'hearth-shipped-profiles-'));
    try {
      await cp('profiles', shipped, { recursive: true });
      const shippedText = await readFile(path.join(shipped, 'secretary.md'), 'utf8');
      library = new OllamaModelLibrary({ installed: [gemma, qwen] });
      await ollama.close();
      ollama = await startScriptedOllama({ library });
      const hearth = await start({ llm: ollama, env: { PROFILES_DIR: shipped } });
      const refused = await hearth.request('PATCH', '/agents/profiles/secretary', { model: 'gemma3:1b' });
      expect(refused).toMatchObject({ status: 400, body: { error: { code: 'model_cannot_call_tools', message: expect.stringMatching(/^gemma3:1b cannot call tools .* the Personal Secretary profile works through tools \(scratchpad, todo/) } } });
      const loaded = once(library, 'loaded');
      const changed = await hearth.request('PATCH', '/agents/profiles/secretary', { model: 'qwen3:8b' });
      expect(changed).toMatchObject({ status: 200, body: { id: 'secretary', model: 'qwen3:8b', backend: 'ollama' } });
      expect(await loaded).toEqual(['qwen3:8b']);
      expect(await readFile(path.join(hearth.dataDir, 'profiles', 'secretary.md'), 'utf8')).toMatch(/^---\nid: secretary\nmodel: "qwen3:8b"\nname: Personal Secretary\n/);
      expect(await readFile(path.join(shipped, 'secretary.md'), 'utf8')).toBe(shippedText);
      expect((await hearth.request('GET', '/models')).body.models.find((model: { name: string }) => model.name === 'qwen3:8b').used_by).toEqual(['default', 'secretary', 'server_admin', 'smart_home']);
      expect(await hearth.request('PATCH', '/agents/profiles/nobody', { model: 'qwen3:8b' })).toMatchObject({ status: 400, body: { error: { code: 'unknown_profile' } } });
    } finally {
      await rm(shipped, { recursive: true, force: true });
    }
  });
});

describe('PATCH /sessions/:id {model}', () => {
  it("refuses a model that cannot call tools for a session whose profile has tools, and loads a switched model ahead", async () => {
    library = new OllamaModelLibrary({ installed: [gemma, qwen] });
    await ollama.close();
    ollama = await startScriptedOllama({ library });
    const hearth = await hearthWithModels();
    const sessionId = await hearth.createSession('secretary');
    expect(await hearth.request('PATCH', `/sessions/${sessionId}`, { model: 'gemma3:1b' })).toMatchObject({ status: 400, body: { error: { code: 'model_cannot_call_tools' } } });
    expect((await hearth.request('GET', `/sessions/${sessionId}`)).body.model).toBeNull();
    const loaded = once(library, 'loaded');
    expect(await hearth.request('PATCH', `/sessions/${sessionId}`, { model: 'qwen3:8b' })).toMatchObject({ status: 200, body: { model: 'qwen3:8b' } });
    expect(await loaded).toEqual(['qwen3:8b']);
  });
});

describe('owner only', () => {
  it('an adult and a child may not pull, cancel, delete or choose, and their pages hear nothing of pulls', async () => {
    const hearth = await hearthWithModels();
    const { owner, people } = await household(hearth, ['adult', 'child'] as const);
    library.plan('tiny:1b', { holdAfter: 2 });
    const held = once(library, 'held');
    expect((await owner.request('POST', '/models/pull', { name: 'tiny:1b' })).status).toBe(202);
    await held;
    const ownerPage = await owner.events();
    expect(((await ownerPage.nextMatching(ofType('hello'))) as Frame).model_pulls).toHaveLength(1);
    const pages = [];
    for (const person of people) {
      const page = await person.events();
      expect(((await page.nextMatching(ofType('hello'))) as Frame).model_pulls).toEqual([]);
      pages.push(page);
      for (const [method, url, body] of [
        ['POST', '/models/pull', { name: 'qwen3:8b' }],
        ['DELETE', `/models/pulls/${encoded('tiny:1b')}`, undefined],
        ['DELETE', `/models/${encoded('gemma3:1b')}`, undefined],
        ['PUT', '/models/default', { name: 'gemma3:1b' }],
        ['PATCH', '/agents/profiles/smart_home', { model: 'gemma3:1b' }],
      ] as const) {
        expect(await person.request(method, url, body), `${person.person.role} ${method} ${url}`).toMatchObject({ status: 403, body: { error: { code: 'forbidden' } } });
      }
      expect((await person.request('GET', '/models')).status).toBe(200);
    }
    library.release('tiny:1b');
    // models_changed goes to every page, after the pull's end: by then each page was sent all it would be of the pull.
    await ownerPage.nextMatching(ofType('models_changed'));
    for (const page of pages) await page.nextMatching(ofType('models_changed'));
    expect(ownerPage.events.filter(ofType('model_pull', (frame) => frame.state === 'done'))).toHaveLength(1);
    for (const page of pages) {
      expect(page.events.filter(ofType('model_pull'))).toEqual([]);
      page.close();
    }
    ownerPage.close();
  });
});

describe('with an OpenAI-compatible default backend', () => {
  it('lists /v1/models with unknown capabilities; pull, delete and loaded answer 400 not_supported', async () => {
    const hearth = await start({ backend: 'openai' });
    const { body } = await hearth.request('GET', '/models');
    expect(body).toMatchObject({ backend: 'openai', default_model: 'scripted-model', gpu: null, pulls: [] });
    expect(body.models[0]).toEqual({ name: 'fake', capabilities: { tools: null, thinking: null, vision: null }, loaded: null, used_by: [], fit: null });
    for (const [method, url, bodyOf] of [
      ['POST', '/models/pull', { name: 'qwen3:8b' }],
      ['DELETE', `/models/${encoded('qwen3:8b')}`, undefined],
      ['GET', '/models/loaded', undefined],
      ['POST', '/models/warm', { name: 'qwen3:8b' }],
    ] as const) {
      expect(await hearth.request(method, url, bodyOf)).toMatchObject({ status: 400, body: { error: { code: 'not_supported', message: expect.stringContaining('openai') } } });
    }
  });
});
