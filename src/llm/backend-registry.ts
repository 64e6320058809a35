import type { Config } from '../config.ts';
import { ConcurrencyGate } from './concurrency-gate.ts';
import { createOllamaBackend } from './ollama.ts';
import { queuedBackend } from './queued-backend.ts';
import type { BackendId, LlmBackend, LlmError } from './types.ts';

export type BackendChoice = { ok: true; backend: LlmBackend; model: string } | { ok: false; error: LlmError };

/**
 * The configured backends, and which backend and model a profile's call goes to. Every backend
 * is handed out behind its own gate of `maxConcurrent` places (LLM_MAX_CONCURRENT), so no call,
 * whoever makes it, has more than that many requests in flight at one backend.
 */
export class BackendRegistry {
  private readonly backends: Partial<Record<BackendId, LlmBackend>> = {};

  constructor(
    backends: Partial<Record<BackendId, LlmBackend>>,
    private readonly defaultBackend: BackendId,
    maxConcurrent: number,
  ) {
    for (const [id, backend] of Object.entries(backends) as [BackendId, LlmBackend][]) {
      this.backends[id] = queuedBackend(backend, new ConcurrencyGate(maxConcurrent));
    }
  }

  /** The OpenAI client (~150 modules) is loaded only when an OpenAI-compatible endpoint is configured. */
  static async fromConfig(config: Config): Promise<BackendRegistry> {
    const backends: Partial<Record<BackendId, LlmBackend>> = {
      ollama: createOllamaBackend({
        host: config.OLLAMA_HOST,
        defaultModel: config.OLLAMA_DEFAULT_MODEL,
        stallTimeoutMs: config.LLM_STALL_TIMEOUT_S * 1000,
      }),
    };
    if (config.OPENAI_BASE_URL !== '') {
      const { createOpenAIBackend } = await import('./openai.ts');
      backends.openai = createOpenAIBackend({
        baseUrl: config.OPENAI_BASE_URL,
        apiKey: config.OPENAI_API_KEY,
        defaultModel: config.OPENAI_MODEL,
        stallTimeoutMs: config.LLM_STALL_TIMEOUT_S * 1000,
      });
    }
    return new BackendRegistry(backends, config.LLM_BACKEND, config.LLM_MAX_CONCURRENT);
  }

  choose(preference: { backend?: BackendId; model?: string } = {}): BackendChoice {
    const id = preference.backend ?? this.defaultBackend;
    const backend = this.backends[id];
    if (!backend) {
      return {
        ok: false,
        error: {
          code: 'llm_error',
          message: `The ${id} backend is not configured: set OPENAI_BASE_URL (and OPENAI_MODEL) to an OpenAI-compatible endpoint such as http://localhost:8080/v1.`,
        },
      };
    }
    const model = preference.model ?? backend.defaultModel;
    if (model === '') {
      return { ok: false, error: { code: 'llm_error', message: `No model is set for the ${id} backend: set OPENAI_MODEL or the profile's model.` } };
    }
    return { ok: true, backend, model };
  }
}
