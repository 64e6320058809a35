import type { Clock } from '../time/clock.ts';

export interface ThrottleSettings {
  /** Failures let through at once before the waits begin. */
  freeFailures: number;
  /** The first wait; each further failure doubles it. */
  firstDelayMs: number;
  /** The longest wait: an attacker never makes the owner wait longer than this. */
  longestDelayMs: number;
  /** A name or an address with no failure for this long starts afresh. */
  forgetAfterMs: number;
  /** Attempts one address may have waiting at once; more are refused unchecked. */
  waitingPerAddress: number;
  /** Names and addresses remembered; the stalest are forgotten beyond it, so memory stays bounded. */
  remembered: number;
}

export const defaultThrottleSettings: ThrottleSettings = {
  freeFailures: 3,
  firstDelayMs: 1000,
  longestDelayMs: 60_000,
  forgetAfterMs: 60 * 60_000,
  waitingPerAddress: 4,
  remembered: 10_000,
};

interface Failures {
  count: number;
  lastAt: number;
}

/**
 * Slows failed sign-ins, per person (by the name tried, existing or not) and per address, in
 * memory: a restart forgets them, which costs an attacker a restart they cannot cause. After a few
 * failures each attempt waits 1 s, 2 s, 4 s, … up to a minute before its passphrase is checked;
 * the attempt is held, not refused, so the owner typing the right passphrase while someone else
 * guesses theirs gets in after at most that minute, never locked out. Parallel guesses gain
 * nothing: an address may have only a few attempts waiting, the rest are refused unchecked.
 */
export class SignInThrottle {
  private readonly failures = new Map<string, Failures>();
  private readonly waiting = new Map<string, number>();

  constructor(
    private readonly clock: Clock,
    private readonly settings: ThrottleSettings = defaultThrottleSettings,
  ) {}

  /**
   * Waits until an attempt for `name` from `address` may be checked. Undefined when the address
   * already has as many attempts waiting as it may (refuse it); else the function to call once it
   * was checked.
   */
  async admit(name: string, address: string): Promise<(() => void) | undefined> {
    const waitingHere = this.waiting.get(address) ?? 0;
    if (waitingHere >= this.settings.waitingPerAddress) return undefined;
    this.waiting.set(address, waitingHere + 1);
    const release = () => {
      const left = (this.waiting.get(address) ?? 1) - 1;
      if (left > 0) this.waiting.set(address, left);
      else this.waiting.delete(address);
    };
    const until = Math.max(this.notBefore(personKey(name)), this.notBefore(addressKey(address)));
    if (until > this.clock.now().getTime()) await new Promise<void>((resolve) => this.clock.setTimer(new Date(until), resolve));
    return release;
  }

  /** Counts a failure against the name and the address; returns how many the name has now. */
  failed(name: string, address: string): number {
    const now = this.clock.now().getTime();
    this.count(addressKey(address), now);
    return this.count(personKey(name), now);
  }

  succeeded(name: string, address: string): void {
    this.failures.delete(personKey(name));
    this.failures.delete(addressKey(address));
  }

  /** How long the next attempt after `count` failures waits. */
  delayAfter(count: number): number {
    const { freeFailures, firstDelayMs, longestDelayMs } = this.settings;
    if (count < freeFailures) return 0;
    return Math.min(firstDelayMs * 2 ** Math.min(count - freeFailures, 30), longestDelayMs);
  }

  private notBefore(key: string): number {
    const failures = this.current(key, this.clock.now().getTime());
    return failures ? failures.lastAt + this.delayAfter(failures.count) : 0;
  }

  private count(key: string, now: number): number {
    const failures = this.current(key, now) ?? { count: 0, lastAt: now };
    failures.count += 1;
    failures.lastAt = now;
    // Re-inserted, so the map's order is the order of last failure and the stalest come first.
    this.failures.delete(key);
    this.failures.set(key, failures);
    if (this.failures.size > this.settings.remembered) this.failures.delete(this.failures.keys().next().value!);
    return failures.count;
  }

  private current(key: string, now: number): Failures | undefined {
    const failures = this.failures.get(key);
    if (failures && now - failures.lastAt >= this.settings.forgetAfterMs) {
      this.failures.delete(key);
      return undefined;
    }
    return failures;
  }
}

function personKey(name: string): string {
  return `name:${name.normalize('NFC').toLowerCase()}`;
}

function addressKey(address: string): string {
  return `address:${address}`;
}
