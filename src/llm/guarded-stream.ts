import { setImmediate as nextTurn } from 'node:timers/promises';
import { eventLoopTurnNumber } from '../event-loop-turns.ts';
import { abortedError } from './errors.ts';
import type { LlmError, LlmStreamEvent, Usage } from './types.ts';

/**
 * A stream whose chunks are already buffered is read through promise callbacks alone,
 * which never let the event loop reach other sockets; after this long of reading within
 * one event-loop turn the stream waits for the next, so a backend sending as fast as it
 * can does not starve other clients. A chunk that had to be waited for starts a new share.
 */
const fairShareMs = 10;

export type LlmDeltaEvent = Exclude<LlmStreamEvent, { type: 'done' } | { type: 'error' }>;

/**
 * Runs a backend's delta producer and ends the stream with exactly one `done` or `error`.
 * Once the signal aborts, nothing more is passed on: the stream ends with `abortReason()`
 * (some clients end their iteration quietly on abort instead of throwing).
 */
export async function* guardedStream(
  signal: AbortSignal,
  produce: () => AsyncGenerator<LlmDeltaEvent, Usage | undefined>,
  describeFailure: (error: unknown) => LlmError,
  abortReason: () => LlmError = () => abortedError,
): AsyncGenerator<LlmStreamEvent, void, undefined> {
  if (signal.aborted) {
    yield { type: 'error', error: abortReason() };
    return;
  }
  const deltas = produce();
  let ending: LlmStreamEvent;
  let turn = eventLoopTurnNumber();
  let shareStarted = performance.now();
  try {
    while (true) {
      if (eventLoopTurnNumber() === turn && performance.now() - shareStarted > fairShareMs) await nextTurn();
      if (eventLoopTurnNumber() !== turn) {
        turn = eventLoopTurnNumber();
        shareStarted = performance.now();
      }
      const step = await deltas.next();
      if (signal.aborted) {
        ending = { type: 'error', error: abortReason() };
        break;
      }
      if (step.done) {
        ending = { type: 'done', ...(step.value ? { usage: step.value } : {}) };
        break;
      }
      yield step.value;
    }
  } catch (error) {
    ending = { type: 'error', error: signal.aborted ? abortReason() : describeFailure(error) };
  } finally {
    await deltas.return(undefined).catch(() => undefined);
  }
  yield ending;
}
