/**
 * Fair shares of the event loop. Work that is all promise callbacks (a stream whose chunks
 * are already buffered, 100 turns sent at once, 100 drafts due on the same second) never lets
 * the loop reach a socket: one such batch held every streaming answer for its whole length
 * (bench scenario 4's p99 chunk lag).
 */

let turnNumber = 0;
let countScheduled = false;

function countTurn(): void {
  turnNumber++;
  countScheduled = false;
}

/** Changes between two calls when the event loop moved on between them (to its check phase, or to a waiter of ownEventLoopTurn). */
export function eventLoopTurnNumber(): number {
  if (!countScheduled) {
    countScheduled = true;
    setImmediate(countTurn);
  }
  return turnNumber;
}

const waiting: (() => void)[] = [];
let resumeScheduled = false;

function resumeNext(): void {
  resumeScheduled = false;
  turnNumber++;
  waiting.shift()?.();
  // Scheduled while immediates run, so it waits for the next turn, after that turn's poll phase.
  if (waiting.length > 0) scheduleResume();
}

function scheduleResume(): void {
  if (resumeScheduled) return;
  resumeScheduled = true;
  setImmediate(resumeNext);
}

/** Settles in an event-loop turn of its own, after the I/O that turn found ready; first come, first served. */
export function ownEventLoopTurn(): Promise<void> {
  return new Promise((resolve) => {
    waiting.push(resolve);
    scheduleResume();
  });
}

/**
 * Settles once the event loop has polled for I/O since the call: what arrived while the caller
 * held the thread (a request, say) is read first. One setImmediate is not enough when the caller
 * runs in the poll phase (after a file read, a socket's data): its immediate runs in the same
 * turn, before the loop looks for I/O again.
 */
export async function afterInputArrivedMeanwhile(): Promise<void> {
  await ownEventLoopTurn();
  await ownEventLoopTurn();
}
