import { describe, expect, it } from 'vitest';
import { parseAllowedUsers, StrangerLog, type Stranger } from '../src/channels/telegram/allowed-users.ts';

describe('parseAllowedUsers', () => {
  it('reads comma-separated numeric ids, spaces and a trailing comma allowed', () => {
    const parsed = parseAllowedUsers(' 12345678, 87654321 ,12345678,');
    expect(parsed).toEqual({ ok: true, userIds: new Set([12345678, 87654321]) });
  });

  it('refuses anything else with one line naming the bad item', () => {
    for (const [value, item] of [['12345678,@ada', '@ada'], ['ada', 'ada'], ['-5', '-5'], ['1.5', '1.5'], ['99999999999999999', '99999999999999999'], ['0', '0']]) {
      const parsed = parseAllowedUsers(value!);
      expect(parsed.ok, value).toBe(false);
      if (parsed.ok) continue;
      expect(parsed.reason).toContain(JSON.stringify(item));
      expect(parsed.reason).not.toContain('\n');
    }
  });

  it('says why an empty list starts nothing', () => {
    const parsed = parseAllowedUsers(' , ');
    expect(parsed.ok).toBe(false);
    expect(!parsed.ok && parsed.reason).toMatch(/^TELEGRAM_ALLOWED_USERS is empty/);
  });
});

describe('StrangerLog', () => {
  it('logs each stranger once, however often they write', () => {
    const logged: Stranger[] = [];
    const strangers = new StrangerLog((stranger) => void logged.push(stranger));
    expect(strangers.note({ id: 1, username: 'eve' })).toBe(true);
    expect(strangers.note({ id: 1, username: 'eve' })).toBe(false);
    expect(strangers.note({ id: 2 })).toBe(true);
    expect(logged.map((stranger) => stranger.id)).toEqual([1, 2]);
  });

  it('remembers at most its capacity, forgetting the oldest', () => {
    const logged: number[] = [];
    const strangers = new StrangerLog((stranger) => void logged.push(stranger.id), 2);
    for (const id of [1, 2, 3, 3, 1]) strangers.note({ id });
    expect(logged).toEqual([1, 2, 3, 1]);
  });
});
