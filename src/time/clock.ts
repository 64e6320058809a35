/** Time as the scheduler sees it; tests pass one they move by hand. */
export interface Clock {
  now(): Date;
  /** Calls `callback` at `at` (at once if it has passed); the returned function cancels it. */
  setTimer(at: Date, callback: () => void): () => void;
}

// setTimeout holds at most 2^31-1 ms (about 24.8 days); a longer wait is made of several.
const longestTimeoutMs = 2 ** 31 - 1;

export const systemClock: Clock = {
  now: () => new Date(),
  setTimer(at, callback) {
    let handle: NodeJS.Timeout;
    const arm = () => {
      const remaining = at.getTime() - Date.now();
      handle = setTimeout(remaining > longestTimeoutMs ? arm : callback, Math.max(0, Math.min(remaining, longestTimeoutMs)));
      handle.unref();
    };
    arm();
    return () => clearTimeout(handle);
  },
};
