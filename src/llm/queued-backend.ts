import { currentCallLane } from './call-lane.ts';
import { collectCompletion } from './collect.ts';
import type { ConcurrencyGate } from './concurrency-gate.ts';
import { abortedError } from './errors.ts';
import type { LlmBackend } from './types.ts';

/**
 * The backend behind a gate: a call waits for a place (in its call lane) before its request is
 * made, and gives the place back when its stream ends, however it ends. A call stopped while it
 * waits ends with `aborted` and never reaches the backend.
 */
export function queuedBackend(backend: LlmBackend, gate: ConcurrencyGate): LlmBackend {
  const queued: LlmBackend = {
    id: backend.id,
    defaultModel: backend.defaultModel,
    async *stream(request) {
      const { lane, onQueued } = currentCallLane();
      let waited = false;
      const admission = await gate.enter({
        lane,
        signal: request.signal,
        onWait: () => {
          waited = true;
          onQueued?.(true);
        },
      });
      if (!admission.admitted) {
        yield { type: 'error', error: abortedError };
        return;
      }
      try {
        if (waited) onQueued?.(false);
        yield* backend.stream(request);
      } finally {
        admission.release();
      }
    },
    complete(request) {
      return collectCompletion(queued.stream(request));
    },
    listModels: (signal) => backend.listModels(signal),
    // In the caller's lane too: indexing is background work, a search from a person's turn is interactive.
    async embed(request) {
      const admission = await gate.enter({ lane: currentCallLane().lane, ...(request.signal && { signal: request.signal }) });
      if (!admission.admitted) return { success: false, code: abortedError.code, error: abortedError.message };
      try {
        return await backend.embed(request);
      } finally {
        admission.release();
      }
    },
  };
  return queued;
}
