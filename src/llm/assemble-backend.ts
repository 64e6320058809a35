import { collectCompletion } from './collect.ts';
import { abortedError } from './errors.ts';
import { StallWatch } from './stall-watch.ts';
import { guardedStream, type LlmDeltaEvent } from './guarded-stream.ts';
import type { BackendId, ChatRequest, EmbedResult, ListedModel, LlmBackend, LlmError, ModelList, Usage } from './types.ts';

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
  /** `modelSetting`: the configuration key that names the model the call asked for, for the hint when it is missing. */
  describeFailure(error: unknown, progress: StreamProgress, modelSetting?: string): LlmError;
  /** Asks the backend for its models; may throw, describeFailure words what it throws. */
  fetchModels(signal: AbortSignal): Promise<ListedModel[]>;
  /** One vector per text from the backend's embedding endpoint; may throw, describeFailure words what it throws. */
  fetchEmbeddings(request: { model: string; input: string[] }, signal: AbortSignal): Promise<number[][]>;
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
    async embed(request): Promise<EmbedResult> {
      if (request.input.length === 0) return { success: true, embeddings: [] };
      // An embedding call answers in one piece, so the stall limit bounds the whole call.
      const stall = new StallWatch(parts.stallTimeoutMs);
      const signal = request.signal ? AbortSignal.any([request.signal, stall.signal]) : stall.signal;
      try {
        const embeddings = await parts.fetchEmbeddings({ model: request.model, input: request.input }, signal);
        const problem = embeddingsProblem(embeddings, request.input.length);
        if (problem) return { success: false, code: 'llm_error', error: `${parts.name} ${problem}` };
        return { success: true, embeddings };
      } catch (error) {
        const failure = request.signal?.aborted
          ? abortedError
          : stall.fired
            ? stall.error(parts.name)
            : parts.describeFailure(error, { connected: false, touch: () => {} }, 'EMBEDDING_MODEL');
        return { success: false, code: failure.code, error: failure.message };
      } finally {
        stall.stop();
      }
    },
  };
  return backend;
}

/** What is wrong with an embedding reply, or undefined: one vector per text, all of one length, all numbers. */
function embeddingsProblem(embeddings: unknown, expected: number): string | undefined {
  if (!Array.isArray(embeddings) || embeddings.length !== expected) {
    return `returned ${Array.isArray(embeddings) ? embeddings.length : 'no'} embeddings for ${expected} texts.`;
  }
  const length = Array.isArray(embeddings[0]) ? embeddings[0].length : 0;
  const wellFormed = (vector: unknown) => Array.isArray(vector) && vector.length === length && vector.every((value) => Number.isFinite(value));
  if (length === 0 || !embeddings.every(wellFormed)) return 'returned embeddings that are not vectors of numbers of one length.';
  return undefined;
}
