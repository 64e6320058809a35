import { collectCompletion } from './collect.ts';
import { abortedError } from './errors.ts';
import { StallWatch } from './stall-watch.ts';
import { guardedStream, type LlmDeltaEvent } from './guarded-stream.ts';
import type { BackendId, ChatRequest, ListedModel, LlmBackend, LlmError, ModelList, Usage } from './types.ts';

/** Whether the backend answered at all (a network failure before that means "unreachable"), and a sign of life per chunk. */
export interface StreamProgress {
  connected: boolean;
  /** Called for the response headers and every chunk read, however small: the call is alive. */
  touch(): void;
}

export interface BackendParts {
  id: BackendId;
  /** How the backend is named to the person, e.g. "Ollama at http://localhost:11434". */
  name: string;
  defaultModel: string;
  /** No sign of life for this long ends the call with `llm_timeout`. */
  stallTimeoutMs: number;
  /** Yields the deltas of one call and returns its usage; may throw, the guard turns that into data. */
  produce(request: ChatRequest, progress: StreamProgress): AsyncGenerator<LlmDeltaEvent, Usage | undefined>;
  describeFailure(error: unknown, progress: StreamProgress): LlmError;
  /** Asks the backend for its models; may throw, describeFailure words what it throws. */
  fetchModels(signal: AbortSignal): Promise<ListedModel[]>;
}

/** A backend from its two protocol-specific parts; streaming guards and `complete()` are shared. */
export function assembleBackend(parts: BackendParts): LlmBackend {
  const backend: LlmBackend = {
    id: parts.id,
    defaultModel: parts.defaultModel,
    async *stream(request) {
      const stall = new StallWatch(parts.stallTimeoutMs);
      const signal = AbortSignal.any([request.signal, stall.signal]);
      const progress: StreamProgress = { connected: false, touch: () => stall.touch() };
      try {
        yield* guardedStream(
          signal,
          () => parts.produce({ ...request, signal }, progress),
          (error) => parts.describeFailure(error, progress),
          () => (stall.fired && !request.signal.aborted ? stall.error(parts.name) : abortedError),
        );
      } finally {
        stall.stop();
      }
    },
    complete(request) {
      return collectCompletion(backend.stream(request));
    },
    async listModels(signal): Promise<ModelList> {
      try {
        return { ok: true, models: await parts.fetchModels(signal) };
      } catch (error) {
        if (signal.aborted) return { ok: false, error: { code: 'llm_unreachable', message: `${parts.name} did not list its models in time.` } };
        return { ok: false, error: parts.describeFailure(error, { connected: false, touch: () => {} }) };
      }
    },
  };
  return backend;
}
