import { once } from 'node:events';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config.ts';
import { BackendRegistry } from '../../src/llm/backend-registry.ts';
import { BackendStatusMonitor, configuredTarget } from '../../src/llm/backend-status.ts';
import { fitOf } from '../../src/llm/models/model-fit.ts';
import { modelNameProblem } from '../../src/llm/models/model-names.ts';
import { ModelService } from '../../src/llm/models/model-service.ts';
import type { ModelLoading } from '../../src/llm/models/model-warm-up.ts';
import { PullProgress } from '../../src/llm/models/pull-progress.ts';
import type { PullState } from '../../src/llm/models/pull-state.ts';
import { withModel } from '../../src/profiles/profile-model.ts';
import { freeLoopbackPort } from '../support/loopback-port.ts';
import { OllamaModelLibrary, type LibraryModel } from '../support/ollama-model-library.ts';
import type { ScriptedLlm } from '../support/scripted-llm.ts';
import { startScriptedOllama } from '../support/scripted-ollama.ts';
import { startScriptedOpenAI } from '../support/scripted-openai.ts';
import { waitUntil } from '../support/wait-until.ts';

// The model service against the Ollama stand-in: pulls with their progress, failures, cancels,
// deletes, the default model, warm-ups; and the OpenAI-compatible backend's list.

const gigabyte = 1_000_000_000;
const qwen: LibraryModel = { name: 'qwen3:8b', family: 'qwen3', parameterSize: '8.2B', quantization: 'Q4_K_M', contextLength: 40960, capabilities: ['completion', 'tools', 'thinking'], layers: [5 * gigabyte, 1_000, 500] };
const gemma: LibraryModel = { name: 'gemma3:1b', family: 'gemma3', parameterSize: '1B', contextLength: 32768, capabilities: ['completion', 'vision'], layers: [800_000_000, 300] };
const old: LibraryModel = { name: 'old:latest', layers: [100] };

let library: OllamaModelLibrary;
let standIn: ScriptedLlm;
let dataDir: string;
const memory = { total: 16 * gigabyte, available: 8 * gigabyte };

beforeEach(async () => {
  library = new OllamaModelLibrary({ registry: [qwen, gemma], installed: [old] });
  standIn = await startScriptedOllama({ library });
  dataDir = await mkdtemp(path.join(tmpdir(), 'hearth-models-'));
});
afterEach(async () => {
  await standIn.close();
  await rm(dataDir, { recursive: true, force: true });
});

async function service(options: { defaultModel?: string; profileUsers?: (name: string) => string[]; url?: string; backend?: 'ollama' | 'openai' } = {}) {
  const config = parseConfig({
    DATA_DIR: dataDir,
    LLM_BACKEND: options.backend ?? 'ollama',
    OLLAMA_HOST: options.backend === 'openai' ? '' : (options.url ?? standIn.url),
    OLLAMA_DEFAULT_MODEL: options.defaultModel ?? 'qwen3:8b',
    ...(options.backend === 'openai' && { OPENAI_BASE_URL: options.url!, OPENAI_MODEL: 'scripted-model' }),
  });
  const backends = await BackendRegistry.fromConfig(config);
  const backendStatus = new BackendStatusMonitor(configuredTarget(config));
  const models = new ModelService({ backends, backendStatus, ollamaHost: config.OLLAMA_HOST, dataDir, profileUsers: options.profileUsers ?? (() => []), memory: () => memory });
  await models.restoreDefault();
  const pulls: PullState[] = [];
  const loadings: ModelLoading[] = [];
  let changes = 0;
  models.on('pull', (state) => pulls.push(state));
  models.on('loading', (loading) => loadings.push(loading));
  models.on('changed', () => (changes += 1));
  return { models, backends, backendStatus, pulls, loadings, changes: () => changes };
}

async function finished(models: ModelService, name: string): Promise<PullState> {
  const started = models.pull(name);
  if (!started.ok) throw new Error(started.message);
  return started.finished;
}

describe('a pull', () => {
  it('streams Ollama\'s lines as one bar over every layer, ends done, and lists the model with its details', async () => {
    const { models, pulls, changes } = await service();
    library.plan('gemma3:1b', { steps: 2 });
    const end = await finished(models, 'gemma3:1b');
    expect(end).toMatchObject({ name: 'gemma3:1b', status: 'success', state: 'done', completed: 800_000_300, total: 800_000_300 });
    expect(pulls[0]).toEqual({ name: 'gemma3:1b', status: 'pulling manifest', state: 'pulling' });
    expect(pulls.at(-1)!.state).toBe('done');
    // Each update is the bytes summed over the layers known so far, never going back.
    const completed = pulls.flatMap((state) => (state.completed === undefined ? [] : [state.completed]));
    expect(completed).toEqual([...completed].sort((left, right) => left - right));
    expect(changes()).toBe(1);
    expect(models.currentPulls()).toEqual([]);
    const listed = await models.list(AbortSignal.timeout(5_000));
    if (!listed.ok) throw new Error(listed.error.message);
    expect(listed.view.models.find((model) => model.name === 'gemma3:1b')).toEqual({
      name: 'gemma3:1b',
      size: 800_000_300,
      family: 'gemma3',
      parameters: '1B',
      quantization: 'Q4_K_M',
      context_length: 32768,
      capabilities: { tools: false, thinking: false, vision: true },
      loaded: null,
      used_by: [],
      fit: 'fits',
    });
    // An Ollama that does not say what a model can do: unknown, not "cannot".
    expect(listed.view.models.find((model) => model.name === 'old:latest')!.capabilities).toEqual({ tools: null, thinking: null, vision: null });
    expect(listed.view).toMatchObject({ backend: 'ollama', default_model: 'qwen3:8b', memory, gpu: null, pulls: [] });
  });

  it('passes on at most ten updates a second, the latest winning, and every state change at once', async () => {
    const { models, pulls } = await service();
    const sentLines: number[] = [];
    library.on('line', (name) => name === 'qwen3:8b' && sentLines.push(performance.now()));
    const times: number[] = [];
    models.on('pull', () => times.push(performance.now()));
    library.plan('qwen3:8b', { steps: 40, intervalMs: 5 });
    const end = await finished(models, 'qwen3:8b');
    expect(end.state).toBe('done');
    expect(sentLines.length).toBeGreaterThan(120);
    expect(pulls.length).toBeLessThan(sentLines.length / 4);
    // Between two updates of the same state, at least ~100 ms (timers may fire a little early).
    for (let index = 1; index < pulls.length; index += 1) {
      if (pulls[index]!.state !== pulls[index - 1]!.state) continue;
      expect(times[index]! - times[index - 1]!).toBeGreaterThanOrEqual(95);
    }
    // The last line before success still arrived: the bar reached the whole size.
    expect(pulls.at(-1)).toMatchObject({ state: 'done', completed: qwen.layers.reduce((sum, size) => sum + size, 0) });
  });

  it('fails mid-way with the reason in plain words, and is no longer current', async () => {
    const { models, changes } = await service();
    library.plan('qwen3:8b', { failAfter: { lines: 4, error: 'write /root/.ollama/models/blobs/sha256-1234-partial: no space left on device' } });
    const end = await finished(models, 'qwen3:8b');
    expect(end).toMatchObject({ state: 'failed', error: expect.stringMatching(/^Not enough disk space for qwen3:8b/) });
    expect(end.completed).toBeGreaterThan(0);
    expect(models.currentPulls()).toEqual([]);
    expect(changes()).toBe(0);
    expect(library.has('qwen3:8b')).toBe(false);
  });

  it('says which reasons: an unknown name, a damaged download, a registry out of reach, Ollama not running', async () => {
    const { models } = await service();
    expect(await finished(models, 'no-such-model:7b')).toMatchObject({ state: 'failed', error: 'Ollama has no model named no-such-model:7b.' });
    library.plan('gemma3:1b', { digestMismatch: true });
    expect(await finished(models, 'gemma3:1b')).toMatchObject({ state: 'failed', status: 'verifying sha256 digest', error: 'The download of gemma3:1b arrived damaged (digest mismatch); pull it again.' });
    library.plan('qwen3:8b', { failAfter: { lines: 1, error: 'pull model manifest: Get "https://registry.ollama.ai/v2/library/qwen3/manifests/8b": dial tcp: lookup registry.ollama.ai: no such host' } });
    expect((await finished(models, 'qwen3:8b')).error).toMatch(/^Ollama could not reach the registry/);
    const nobody = `http://127.0.0.1:${await freeLoopbackPort()}`;
    const closed = await service({ url: nobody });
    expect((await finished(closed.models, 'qwen3:8b')).error).toBe(`Cannot reach Ollama at ${nobody} (ECONNREFUSED). Is \`ollama serve\` running?`);
  });

  it('is kept while it runs (a page opening mid-pull sees it), one per name, and a cancel ends it and closes the download', async () => {
    const { models, pulls } = await service();
    library.plan('qwen3:8b', { steps: 4, holdAfter: 3 });
    const held = once(library, 'held');
    const started = models.pull('qwen3:8b');
    if (!started.ok) throw new Error(started.message);
    await held;
    // Three lines out: the manifest, the first layer at 0 and at a quarter.
    await waitUntil(() => models.currentPulls()[0]?.completed === 1_250_000_000);
    expect(models.currentPulls()).toEqual([{ name: 'qwen3:8b', status: expect.stringMatching(/^pulling [0-9a-f]{12}$/), completed: 1_250_000_000, total: 5_000_000_000, state: 'pulling' }]);
    expect(models.pull('qwen3:8b')).toEqual({ ok: false, code: 'pull_running', message: 'qwen3:8b is already being pulled.' });
    const closed = once(library, 'closed');
    expect(models.cancelPull('qwen3:8b')).toBe(true);
    expect(await started.finished).toMatchObject({ state: 'cancelled', completed: 1_250_000_000 });
    expect(await closed).toEqual(['qwen3:8b', true]);
    expect(pulls.at(-1)!.state).toBe('cancelled');
    expect(models.currentPulls()).toEqual([]);
    expect(models.cancelPull('qwen3:8b')).toBe(false);
    expect(library.has('qwen3:8b')).toBe(false);
  });

  it('of a model in use is loaded ahead once done (model_loading), and the status is checked again', async () => {
    const { models, loadings } = await service({ defaultModel: 'gemma3:1b' });
    const loaded = once(library, 'loaded');
    await finished(models, 'gemma3:1b');
    expect(await loaded).toEqual(['gemma3:1b']);
    await waitUntil(() => loadings.length === 2);
    expect(loadings).toEqual([{ name: 'gemma3:1b', state: 'loading' }, { name: 'gemma3:1b', state: 'loaded' }]);
    const listed = await models.list(AbortSignal.timeout(5_000));
    if (!listed.ok) throw new Error(listed.error.message);
    const gemmaEntry = listed.view.models.find((model) => model.name === 'gemma3:1b')!;
    expect(gemmaEntry.loaded).toEqual({ name: 'gemma3:1b', size: 800_000_300, size_vram: 0, expires_at: expect.any(String) });
    expect(gemmaEntry.used_by).toEqual(['default']);
    // Not in use: not loaded.
    await finished(models, 'qwen3:8b');
    expect(loadings).toHaveLength(2);
  });
});

describe('the models', () => {
  it('delete: gone from the list and changed; an unknown one is model_not_found', async () => {
    const { models, changes } = await service();
    expect(await models.remove('old:latest', AbortSignal.timeout(5_000))).toEqual({ ok: true });
    expect(changes()).toBe(1);
    expect(library.has('old:latest')).toBe(false);
    expect(await models.remove('old:latest', AbortSignal.timeout(5_000))).toEqual({ ok: false, code: 'model_not_found', message: 'Ollama has no model named old:latest.' });
  });

  it('the default chosen is used by calls naming none, kept in DATA_DIR/models.json, and put back at the next start', async () => {
    const first = await service();
    await first.models.setDefault('old:latest');
    expect(first.backends.choose()).toMatchObject({ ok: true, model: 'old:latest' });
    expect(first.backendStatus.current().model).toBe('old:latest');
    expect(JSON.parse(await readFile(path.join(dataDir, 'models.json'), 'utf8'))).toEqual({ default_models: { ollama: 'old:latest' } });
    expect(first.changes()).toBe(1);
    const second = await service();
    expect(second.models.defaultModel()).toBe('old:latest');
    expect(second.backends.choose({ model: 'qwen3:8b' })).toMatchObject({ model: 'qwen3:8b' });
    expect(second.backendStatus.current().model).toBe('old:latest');
  });

  it('loaded: what /api/ps reports, with the GPU memory summed', async () => {
    const { models } = await service();
    library.load('old:latest', 4_000, '2026-11-29T03:00:00.000Z');
    expect(await models.loaded(AbortSignal.timeout(5_000))).toEqual({ ok: true, models: [{ name: 'old:latest', size: 100, size_vram: 4_000, expires_at: '2026-11-29T03:00:00.000Z' }] });
    const listed = await models.list(AbortSignal.timeout(5_000));
    expect(listed.ok && listed.view.gpu).toEqual({ used: 4_000 });
  });

  it('with an OpenAI-compatible default backend: the list with unknown capabilities, and nothing to pull, delete or load', async () => {
    const openai = await startScriptedOpenAI({ models: ['big-model'] });
    try {
      const { models } = await service({ backend: 'openai', url: openai.url });
      const listed = await models.list(AbortSignal.timeout(5_000));
      if (!listed.ok) throw new Error(listed.error.message);
      expect(listed.view.backend).toBe('openai');
      expect(listed.view.models.map((model) => [model.name, model.capabilities, model.fit, model.loaded])).toContainEqual(['big-model', { tools: null, thinking: null, vision: null }, null, null]);
      expect(models.pull('x:1b')).toMatchObject({ ok: false, code: 'not_supported', message: 'Hearth can pull models only with Ollama; the default backend is openai.' });
      expect(await models.remove('x:1b', AbortSignal.timeout(1_000))).toMatchObject({ ok: false, code: 'not_supported' });
      expect(await models.loaded(AbortSignal.timeout(1_000))).toMatchObject({ ok: false, code: 'not_supported' });
      expect(models.warm('x:1b')).toBe(false);
    } finally {
      await openai.close();
    }
  });
});

describe('the small rules', () => {
  it('model names: name:tag, namespace/name:tag, hf.co/user/repo:quant; nothing that could reach a path or a URL', () => {
    for (const name of ['qwen3:8b', 'qwen3', 'library/qwen3:8b', 'hf.co/bartowski/Llama-3.2-1B-Instruct-GGUF:Q4_K_M', 'user/model_v2.1:latest']) expect(modelNameProblem(name), name).toBeUndefined();
    for (const name of ['', 'a b', '../etc/passwd', 'x/../../y', '/abs:1', 'name:tag:tag', 'naïve', 'x?y', `${'a'.repeat(201)}`, 'a//b', '-flag']) expect(modelNameProblem(name), name).toBeDefined();
  });

  it('fit: free memory, the whole memory, or too big; unknown without a size', () => {
    expect(fitOf(5 * gigabyte, memory)).toBe('fits');
    expect(fitOf(10 * gigabyte, memory)).toBe('tight');
    expect(fitOf(14 * gigabyte, memory)).toBe('too_big');
    expect(fitOf(undefined, memory)).toBeNull();
  });

  it('progress: layers summed, each counted once however often it is reported', () => {
    const progress = new PullProgress();
    expect(progress.add({ status: 'pulling manifest' })).toEqual({});
    expect(progress.add({ status: 'pulling a', digest: 'a', total: 100, completed: 10 })).toEqual({ completed: 10, total: 100 });
    expect(progress.add({ status: 'pulling a', digest: 'a', total: 100, completed: 100 })).toEqual({ completed: 100, total: 100 });
    expect(progress.add({ status: 'pulling b', digest: 'b', total: 50, completed: 0 })).toEqual({ completed: 100, total: 150 });
    expect(progress.add({ status: 'verifying sha256 digest' })).toEqual({ completed: 100, total: 150 });
  });

  it("a profile's model: set in its front matter, the rest as written", () => {
    const text = '---\nid: helper\nname: Helper # mine\ntools:\n  - todo\n---\nBe brief.\n';
    expect(withModel(text, 'qwen3:8b')).toBe('---\nid: helper\nmodel: "qwen3:8b"\nname: Helper # mine\ntools:\n  - todo\n---\nBe brief.\n');
    expect(withModel(withModel(text, 'qwen3:8b'), 'gemma3:1b')).toBe('---\nid: helper\nmodel: "gemma3:1b"\nname: Helper # mine\ntools:\n  - todo\n---\nBe brief.\n');
  });
});
