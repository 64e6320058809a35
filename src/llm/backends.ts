// The table of model backends: a backend is one entry here (plus its adapter file), and the
// registry, the status check and the configuration's ids all read it.
import { backendIds, type BackendId } from '../backend-ids.ts';
import type { Config } from '../config.ts';
import { probeOllama, probeOpenAI, type BackendTarget, type ProbeResult } from './backend-probe.ts';
import { createOllamaBackend } from './ollama.ts';
import type { LlmBackend } from './types.ts';

/** The configuration keys whose values are of type `Value`. */
type KeyOf<Value> = { [Key in keyof Config]: Config[Key] extends Value ? Key : never }[keyof Config];

/** The configuration keys a backend reads, by what each is for. */
export interface BackendSettings {
  /** Where the backend answers; while it is empty the backend is not set up. */
  url: KeyOf<string>;
  /** The model used when a profile names none. */
  model: KeyOf<string>;
  apiKey?: KeyOf<string>;
  /** Requested (Ollama's num_ctx), and what requests are fitted into and compression measures against. */
  contextWindow: KeyOf<number>;
  /** Ask thinking-capable models to reason first. */
  think: KeyOf<boolean>;
}

/** What a backend's calls are sized and asked with. */
export interface ModelLimits {
  contextWindow: number;
  think: boolean;
}

/** The values of a backend's settings, which its factory builds it from. */
export interface BackendSetup {
  url: string;
  model: string;
  /** Empty when the backend reads no key or none is set. */
  apiKey: string;
  /** No sign of life for this long ends a call with `llm_timeout` (LLM_STALL_TIMEOUT_S). */
  stallTimeoutMs: number;
}

export interface BackendEntry {
  settings: BackendSettings;
  /** What sets the backend up, for a call that asks for it while its url is empty. */
  setUpHint: string;
  create(setup: BackendSetup): Promise<LlmBackend>;
  probe: {
    /** Whether the backend answers and has the model; never throws. */
    check(target: BackendTarget, signal: AbortSignal, unreachableFix: string): Promise<ProbeResult>;
    /** What puts it right when it cannot be reached, by a check or a call. */
    unreachableFix: string;
  };
}

export const backendTable = {
  ollama: {
    settings: { url: 'OLLAMA_HOST', model: 'OLLAMA_DEFAULT_MODEL', contextWindow: 'OLLAMA_NUM_CTX', think: 'OLLAMA_THINK' },
    setUpHint: 'set OLLAMA_HOST to the Ollama server, such as http://localhost:11434',
    create: async (setup) => createOllamaBackend({ host: setup.url, defaultModel: setup.model, stallTimeoutMs: setup.stallTimeoutMs }),
    probe: { check: probeOllama, unreachableFix: 'Start Ollama (`ollama serve`) or set OLLAMA_HOST' },
  },
  openai: {
    settings: { url: 'OPENAI_BASE_URL', model: 'OPENAI_MODEL', apiKey: 'OPENAI_API_KEY', contextWindow: 'OLLAMA_NUM_CTX', think: 'OLLAMA_THINK' },
    setUpHint: 'set OPENAI_BASE_URL (and OPENAI_MODEL) to an OpenAI-compatible endpoint such as http://localhost:8080/v1',
    // The OpenAI client (~150 modules) is loaded only when an OpenAI-compatible endpoint is configured.
    create: async (setup) => {
      const { createOpenAIBackend } = await import('./openai.ts');
      return createOpenAIBackend({ baseUrl: setup.url, apiKey: setup.apiKey, defaultModel: setup.model, stallTimeoutMs: setup.stallTimeoutMs });
    },
    probe: { check: probeOpenAI, unreachableFix: 'Check OPENAI_BASE_URL and OPENAI_API_KEY' },
  },
} satisfies Record<BackendId, BackendEntry>;

export function backendEntry(id: BackendId): BackendEntry {
  return backendTable[id];
}

/** Where a backend is and which model it uses by default: what its status check looks at and `/status` shows. */
export function backendTarget(id: BackendId, config: Config): BackendTarget {
  const { settings } = backendEntry(id);
  const target: BackendTarget = { backend: id, model: config[settings.model], url: config[settings.url] };
  if (settings.apiKey) target.apiKey = config[settings.apiKey];
  return target;
}

/** One look at a backend with its entry's check: is it there, and does it have the model? */
export function probeBackend(target: BackendTarget, signal: AbortSignal): Promise<ProbeResult> {
  const { probe } = backendEntry(target.backend);
  return probe.check(target, signal, probe.unreachableFix);
}

export function backendLimits(id: BackendId, config: Config): ModelLimits {
  const { settings } = backendEntry(id);
  return { contextWindow: config[settings.contextWindow], think: config[settings.think] };
}

/** Every backend whose url is set, built by its factory. */
export async function createBackends(config: Config): Promise<Partial<Record<BackendId, LlmBackend>>> {
  const backends: Partial<Record<BackendId, LlmBackend>> = {};
  for (const id of backendIds) {
    const { settings, create } = backendEntry(id);
    if (config[settings.url] === '') continue;
    const setup = { url: config[settings.url], model: config[settings.model], apiKey: settings.apiKey ? config[settings.apiKey] : '', stallTimeoutMs: config.LLM_STALL_TIMEOUT_S * 1000 };
    backends[id] = await create(setup);
  }
  return backends;
}
