import type { Clock } from '../../src/time/clock.ts';

interface Timer {
  at: number;
  callback: () => void;
}

/** A clock that moves only when the test moves it; timers fire as it passes them. */
export class ManualClock implements Clock {
  private readonly timers = new Set<Timer>();
  private current: number;

  constructor(start: string | Date) {
    this.current = new Date(start).getTime();
  }

  now(): Date {
    return new Date(this.current);
  }

  setTimer(at: Date, callback: () => void): () => void {
    const timer = { at: at.getTime(), callback };
    this.timers.add(timer);
    if (timer.at <= this.current) this.fireDue();
    return () => this.timers.delete(timer);
  }

  /** The earliest armed timer's instant, as ISO. */
  nextTimer(): string | undefined {
    const earliest = Math.min(...[...this.timers].map((timer) => timer.at));
    return Number.isFinite(earliest) ? new Date(earliest).toISOString() : undefined;
  }

  advanceTo(instant: string | Date): void {
    this.current = new Date(instant).getTime();
    this.fireDue();
  }

  private fireDue(): void {
    for (const timer of [...this.timers].sort((first, second) => first.at - second.at)) {
      if (timer.at > this.current) continue;
      this.timers.delete(timer);
      timer.callback();
    }
  }
}
