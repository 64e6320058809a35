/** Who waits first: every `interactive` waiter is let in before any `background` one. */
export type Lane = 'interactive' | 'background';

export type Admission = { admitted: true; release: () => void } | { admitted: false };

export interface EnterOptions {
  lane?: Lane;
  /** Aborting it while waiting leaves the line at once: the place is never taken. */
  signal?: AbortSignal;
  /** Called once, when the caller has to wait (no place is free, or others wait ahead of it). */
  onWait?: () => void;
}

interface Waiter {
  admit: () => void;
}

/**
 * At most `limit` holders at once; the rest wait in order, interactive before background
 * (a person's turn never waits behind scheduled runs). Whoever is let in must call
 * `release()` once it is done; calling it again does nothing.
 */
export class ConcurrencyGate {
  private holders = 0;
  private readonly lines: Record<Lane, Set<Waiter>> = { interactive: new Set(), background: new Set() };

  constructor(readonly limit: number) {
    if (!Number.isInteger(limit) || limit < 1) throw new RangeError(`a concurrency limit must be a whole number of at least 1, not ${limit}`);
  }

  /** How many hold a place now. */
  get active(): number {
    return this.holders;
  }

  /** How many wait for a place. */
  get waiting(): number {
    return this.lines.interactive.size + this.lines.background.size;
  }

  enter(options: EnterOptions = {}): Promise<Admission> {
    const { lane = 'background', signal } = options;
    if (signal?.aborted) return Promise.resolve({ admitted: false });
    const aheadOfIt = lane === 'interactive' ? this.lines.interactive.size : this.waiting;
    if (this.holders < this.limit && aheadOfIt === 0) return Promise.resolve(this.admission());
    options.onWait?.();
    return new Promise((resolve) => {
      const line = this.lines[lane];
      const leave = () => {
        line.delete(waiter);
        resolve({ admitted: false });
      };
      const waiter: Waiter = {
        admit: () => {
          signal?.removeEventListener('abort', leave);
          resolve(this.admission());
        },
      };
      line.add(waiter);
      signal?.addEventListener('abort', leave, { once: true });
    });
  }

  private admission(): Admission {
    this.holders += 1;
    let released = false;
    return {
      admitted: true,
      release: () => {
        if (released) return;
        released = true;
        this.holders -= 1;
        this.admitNext();
      },
    };
  }

  private admitNext(): void {
    while (this.holders < this.limit) {
      const next = first(this.lines.interactive) ?? first(this.lines.background);
      if (!next) return;
      this.lines.interactive.delete(next);
      this.lines.background.delete(next);
      next.admit();
    }
  }
}

function first<T>(set: Set<T>): T | undefined {
  for (const item of set) return item;
  return undefined;
}
