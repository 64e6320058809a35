import { describe, expect, it } from 'vitest';
import { SpeechRate } from '../../src/server/speech-rate.ts';

describe('SpeechRate', () => {
  it('lets a burst through, then one request per refill, each person on their own', () => {
    let now = 0;
    const rate = new SpeechRate({ burst: 3, perMinute: 6, concurrent: 10 }, () => now);
    const taken = [1, 2, 3].map(() => rate.take('ada'));
    expect(taken.every((result) => 'release' in result)).toBe(true);
    expect(rate.take('ada')).toEqual({ retryAfterSeconds: 10 });
    expect('release' in rate.take('bo')).toBe(true);
    now += 10_000;
    expect('release' in rate.take('ada')).toBe(true);
    expect(rate.take('ada')).toEqual({ retryAfterSeconds: 10 });
  });

  it('holds only `concurrent` requests of one person at once, until one ends', () => {
    const rate = new SpeechRate({ burst: 10, perMinute: 60, concurrent: 2 }, () => 0);
    const first = rate.take('ada');
    const second = rate.take('ada');
    expect(rate.take('ada')).toEqual({ retryAfterSeconds: 1 });
    if (!('release' in first) || !('release' in second)) throw new Error('refused');
    first.release();
    first.release();
    expect('release' in rate.take('ada')).toBe(true);
    expect(rate.take('ada')).toEqual({ retryAfterSeconds: 1 });
  });
});
