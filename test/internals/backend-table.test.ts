// The table of backends (src/llm/backends.ts) drives what names a backend: the ids the
// configuration and profiles accept, the backends the registry builds, their limits, and what
// the status shows and advises. All in memory: no backend is reached.
import { describe, expect, it } from 'vitest';
import { backendIds } from '../../src/backend-ids.ts';
import { configKeys, parseConfig, type Config } from '../../src/config.ts';
import { BackendRegistry, modelLimitsFrom } from '../../src/llm/backend-registry.ts';
import { BackendStatusMonitor, configuredTarget } from '../../src/llm/backend-status.ts';
import { backendTable, createBackends } from '../../src/llm/backends.ts';
import { ProfileFrontMatterSchema } from '../../src/profiles/profile.ts';

/** Every backend set up, each setting given a value of its own so a mixed-up key shows. */
const everyBackend = parseConfig({
  OLLAMA_HOST: 'http://127.0.0.1:9',
  OLLAMA_DEFAULT_MODEL: 'local-model',
  OLLAMA_NUM_CTX: '4096',
  OLLAMA_THINK: 'false',
  OPENAI_BASE_URL: 'http://127.0.0.1:9/v1',
  OPENAI_MODEL: 'remote-model',
  OPENAI_API_KEY: 'remote-key',
});

describe('the table of backends', () => {
  it('has one entry per backend id, each reading only keys of the configuration', () => {
    expect(Object.keys(backendTable)).toEqual([...backendIds]);
    for (const entry of Object.values(backendTable)) {
      expect(configKeys).toEqual(expect.arrayContaining(Object.values(entry.settings)));
      expect(entry.probe.unreachableFix).not.toBe('');
      expect(entry.setUpHint).not.toBe('');
    }
  });

  it('gives LLM_BACKEND and a profile\'s backend exactly its ids', () => {
    for (const id of backendIds) expect(parseConfig({ LLM_BACKEND: id }).LLM_BACKEND).toBe(id);
    expect(() => parseConfig({ LLM_BACKEND: 'claude' })).toThrow(`expected one of ${backendIds.join(', ')}.`);
    expect(ProfileFrontMatterSchema.properties.backend.enum).toEqual([...backendIds]);
  });

  it('builds every backend whose url is set, with the model its settings name', async () => {
    const built = await createBackends(everyBackend);
    expect(Object.keys(built)).toEqual([...backendIds]);
    for (const id of backendIds) {
      expect(built[id]!.id).toBe(id);
      expect(built[id]!.defaultModel).toBe(everyBackend[backendTable[id].settings.model]);
    }
  });

  it('leaves out a backend whose url is empty, and a call that asks for it gets the hint that sets it up', async () => {
    const registry = await BackendRegistry.fromConfig(parseConfig({}));
    const choice = registry.choose({ backend: 'openai' });
    expect(choice).toEqual({ ok: false, error: { code: 'llm_error', message: `The openai backend is not configured: ${backendTable.openai.setUpHint}.` } });
    expect(registry.choose()).toMatchObject({ ok: true, model: 'qwen3:8b' });
  });

  it('names the model key of a backend set up without a model', async () => {
    const registry = await BackendRegistry.fromConfig(parseConfig({ OPENAI_BASE_URL: 'http://127.0.0.1:9/v1' }));
    expect(registry.choose({ backend: 'openai' })).toMatchObject({ ok: false, error: { message: expect.stringContaining('set OPENAI_MODEL or') } });
  });

  it("reads each backend's context window and thinking flag from the keys its entry names", () => {
    const limits = modelLimitsFrom(everyBackend);
    for (const id of backendIds) {
      const { settings } = backendTable[id];
      expect(limits[id]).toEqual({ contextWindow: everyBackend[settings.contextWindow], think: everyBackend[settings.think] });
    }
    expect(limits.ollama).toEqual({ contextWindow: 4096, think: false });
  });

  it('shows the default backend with its url and model, and its own fix when a call cannot reach it', async () => {
    for (const id of backendIds) {
      const config: Config = { ...everyBackend, LLM_BACKEND: id };
      const { settings, probe } = backendTable[id];
      const monitor = new BackendStatusMonitor(configuredTarget(config));
      expect(monitor.current()).toEqual({ backend: id, model: config[settings.model], url: config[settings.url], reachable: null, model_available: null, checked_at: null });
      monitor.observeCall({ backend: id, model: config[settings.model], reached: false, message: 'refused' });
      expect(monitor.current()).toMatchObject({ reachable: false, message: 'refused', fix: probe.unreachableFix });
      await monitor.stop();
    }
    expect(configuredTarget({ ...everyBackend, LLM_BACKEND: 'openai' }).apiKey).toBe('remote-key');
  });
});
