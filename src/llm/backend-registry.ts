import { EventEmitter } from 'node:events';
import { backendIds } from '../backend-ids.ts';
import type { Config } from '../config.ts';
import { ConcurrencyGate } from './concurrency-gate.ts';
import { backendEntry, backendLimits, createBackends, type ModelLimits } from './backends.ts';
import { queuedBackend } from './queued-backend.ts';
import { collectCompletion } from './collect.ts';
import type { BackendId, LlmBackend, LlmError, LlmStreamEvent, ModelList } from './types.ts';

export type { ModelLimits };

export type BackendChoice = ({ ok: true; backend: LlmBackend; model: string } & ModelLimits) | { ok: false; error: LlmError };

/** Which backend and model a call asks for; unset parts fall back to the default backend and its default model. */
export type BackendPreference = { backend?: BackendId; model?: string };

/** How one call to a backend ended: it answered, or it could not be reached (other endings say nothing about reachability). */
export type CallOutcome = { backend: BackendId; model: string; reached: boolean; message?: string };

/**
 * The configured backends, and which backend and model a profile's call goes to. Every backend
 * is handed out behind its own gate of `maxConcurrent` places (LLM_MAX_CONCURRENT), so no call,
 * whoever makes it, has more than that many requests in flight at one backend.
 */
export class BackendRegistry extends EventEmitter<{ call: [outcome: CallOutcome] }> {
  private readonly backends: Partial<Record<BackendId, LlmBackend>> = {};
  /** The default backend's model chosen from the page (PUT /models/default), over its configured one. */
  private chosenDefaultModel: string | undefined;

  constructor(
    backends: Partial<Record<BackendId, LlmBackend>>,
    readonly defaultBackend: BackendId,
    maxConcurrent: number,
    private readonly modelLimits: Record<BackendId, ModelLimits>,
  ) {
    super();
    for (const [id, backend] of Object.entries(backends) as [BackendId, LlmBackend][]) {
      this.backends[id] = queuedBackend(this.observed(backend), new ConcurrencyGate(maxConcurrent));
    }
  }

  /** The models the default backend offers (GET /models); its listing does not wait for a place in the queue. */
  async defaultModels(signal: AbortSignal): Promise<{ backend: BackendId } & ModelList> {
    const choice = this.choose();
    if (!choice.ok && !this.backends[this.defaultBackend]) return { backend: this.defaultBackend, ...choice };
    const listed = await this.backends[this.defaultBackend]!.listModels(signal);
    if (listed.ok) this.emit('call', { backend: this.defaultBackend, model: '', reached: true });
    else if (listed.error.code === 'llm_unreachable') this.emit('call', { backend: this.defaultBackend, model: '', reached: false, message: listed.error.message });
    return { backend: this.defaultBackend, ...listed };
  }

  /** The model a call to the default backend that names none uses. */
  defaultModel(): string {
    return this.chosenDefaultModel ?? this.backends[this.defaultBackend]?.defaultModel ?? '';
  }

  setDefaultModel(model: string): void {
    this.chosenDefaultModel = model;
  }

  /** Reports each call's ending as `call`, so the backend status follows what calls find between its checks. */
  private observed(backend: LlmBackend): LlmBackend {
    const report = (outcome: CallOutcome) => this.emit('call', outcome);
    const observed: LlmBackend = {
      id: backend.id,
      defaultModel: backend.defaultModel,
      async *stream(request) {
        let reported = false;
        for await (const event of backend.stream(request)) {
          if (!reported) {
            const outcome = callOutcome(event);
            if (outcome) {
              reported = true;
              report({ backend: backend.id, model: request.model, ...outcome });
            }
          }
          yield event;
        }
      },
      complete: (request) => collectCompletion(observed.stream(request)),
      listModels: (signal) => backend.listModels(signal),
      async embed(request) {
        const result = await backend.embed(request);
        if (result.success) report({ backend: backend.id, model: request.model, reached: true });
        else if (result.code === 'llm_unreachable') report({ backend: backend.id, model: request.model, reached: false, message: result.error });
        return result;
      },
    };
    return observed;
  }

  static async fromConfig(config: Config): Promise<BackendRegistry> {
    return new BackendRegistry(await createBackends(config), config.LLM_BACKEND, config.LLM_MAX_CONCURRENT, modelLimitsFrom(config));
  }

  /** The limits of the backend a preference goes to, known even when that backend is not configured. */
  limits(preference: BackendPreference = {}): ModelLimits {
    return this.modelLimits[preference.backend ?? this.defaultBackend];
  }

  choose(preference: BackendPreference = {}): BackendChoice {
    const id = preference.backend ?? this.defaultBackend;
    const backend = this.backends[id];
    if (!backend) {
      return {
        ok: false,
        error: {
          code: 'llm_error',
          message: `The ${id} backend is not configured: ${backendEntry(id).setUpHint}.`,
        },
      };
    }
    const model = preference.model ?? (id === this.defaultBackend ? this.chosenDefaultModel : undefined) ?? backend.defaultModel;
    if (model === '') {
      const modelKey = backendEntry(id).settings.model;
      return { ok: false, error: { code: 'llm_error', message: `No model is set for the ${id} backend: set ${modelKey} or the profile's model.` } };
    }
    return { ok: true, backend, model, ...this.limits({ backend: id }) };
  }
}

/** Each backend's limits, read from the configuration keys its entry in the table of backends names. */
export function modelLimitsFrom(config: Config): Record<BackendId, ModelLimits> {
  return Object.fromEntries(backendIds.map((id) => [id, backendLimits(id, config)])) as Record<BackendId, ModelLimits>;
}

/** The first content or a clean end means the backend answered; only llm_unreachable means it could not be reached. */
function callOutcome(event: LlmStreamEvent): { reached: boolean; message?: string } | undefined {
  if (event.type === 'error') return event.error.code === 'llm_unreachable' ? { reached: false, message: event.error.message } : undefined;
  return { reached: true };
}
