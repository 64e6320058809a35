export interface SpeechRateSettings {
  /** Requests a person may make at once, before the bucket is empty. */
  burst: number;
  /** Requests a minute refilled after that. */
  perMinute: number;
  /** Requests of one person running at the same time (each runs ffmpeg or a speech server). */
  concurrent: number;
  /** People remembered; the stalest are forgotten beyond it, so memory stays bounded. */
  remembered?: number;
}

interface Bucket {
  tokens: number;
  at: number;
  running: number;
}

/**
 * A token bucket per person, in memory, for the speech routes: each request takes a token, tokens
 * come back at `perMinute`, and only `concurrent` requests of one person run at once. A refused
 * request is told when to try again.
 */
export class SpeechRate {
  private readonly buckets = new Map<string, Bucket>();

  constructor(
    private readonly settings: SpeechRateSettings,
    private readonly now: () => number = Date.now,
  ) {}

  /** The release to call when the request ends, or how many seconds to wait before trying again. */
  take(personId: string): { release: () => void } | { retryAfterSeconds: number } {
    const now = this.now();
    const bucket = this.buckets.get(personId) ?? { tokens: this.settings.burst, at: now, running: 0 };
    const refill = ((now - bucket.at) / 60_000) * this.settings.perMinute;
    bucket.tokens = Math.min(this.settings.burst, bucket.tokens + refill);
    bucket.at = now;
    this.buckets.delete(personId);
    this.buckets.set(personId, bucket);
    this.forgetStalest();
    if (bucket.running >= this.settings.concurrent) return { retryAfterSeconds: 1 };
    if (bucket.tokens < 1) return { retryAfterSeconds: Math.max(1, Math.ceil(((1 - bucket.tokens) * 60) / this.settings.perMinute)) };
    bucket.tokens -= 1;
    bucket.running += 1;
    let released = false;
    return {
      release: () => {
        if (released) return;
        released = true;
        bucket.running -= 1;
      },
    };
  }

  private forgetStalest(): void {
    const limit = this.settings.remembered ?? 10_000;
    for (const [personId, bucket] of this.buckets) {
      if (this.buckets.size <= limit) return;
      if (bucket.running === 0) this.buckets.delete(personId);
    }
  }
}
