/**
 * Passes on at most one update per `intervalMs`, the latest winning, and one marked `urgent` at
 * once (a pull's state change): the page needs the bar to move, not every line Ollama sends.
 * An update that comes too soon waits up to `intervalMs` for a newer one, which goes at once if
 * its turn has come: at a steady pace faster than the limit, what is sent is fresh, not held.
 */
export class ThrottledUpdates<Update> {
  private lastSentAt = -Infinity;
  private pending: Update | undefined;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly intervalMs: number,
    private readonly send: (update: Update) => void,
  ) {}

  push(update: Update, urgent = false): void {
    const waited = performance.now() - this.lastSentAt;
    if (urgent || waited >= this.intervalMs) return this.sendNow(update);
    this.pending = update;
    this.timer ??= setTimeout(() => {
      this.timer = undefined;
      const latest = this.pending;
      if (latest !== undefined) this.sendNow(latest);
    }, this.intervalMs);
  }

  private sendNow(update: Update): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    this.pending = undefined;
    this.lastSentAt = performance.now();
    this.send(update);
  }

  /** Drops what waits; nothing more is sent unless pushed again. */
  stop(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    this.pending = undefined;
  }
}
