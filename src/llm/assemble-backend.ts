import { collectCompletion } from './collect.ts';
import { guardedStream, type LlmDeltaEvent } from './guarded-stream.ts';
import type { BackendId, ChatRequest, LlmBackend, LlmError, Usage } from './types.ts';

/** Whether the backend answered at all: a network failure before that means "unreachable". */
export interface StreamProgress {
  connected: boolean;
}

export interface BackendParts {
  id: BackendId;
  defaultModel: string;
  /** Yields the deltas of one call and returns its usage; may throw, the guard turns that into data. */
  produce(request: ChatRequest, progress: StreamProgress): AsyncGenerator<LlmDeltaEvent, Usage | undefined>;
  describeFailure(error: unknown, progress: StreamProgress): LlmError;
}

/** A backend from its two protocol-specific parts; streaming guards and `complete()` are shared. */
export function assembleBackend(parts: BackendParts): LlmBackend {
  const backend: LlmBackend = {
    id: parts.id,
    defaultModel: parts.defaultModel,
    stream(request) {
      const progress: StreamProgress = { connected: false };
      return guardedStream(
        request.signal,
        () => parts.produce(request, progress),
        (error) => parts.describeFailure(error, progress),
      );
    },
    complete(request) {
      return collectCompletion(backend.stream(request));
    },
  };
  return backend;
}
