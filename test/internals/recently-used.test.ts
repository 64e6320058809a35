import { describe, expect, it } from 'vitest';
import { RecentlyUsed } from '../../src/tools/user-tools/recently-used.ts';

describe('RecentlyUsed', () => {
  it('keeps its entries least recently used first; use moves one to the end, peek does not', () => {
    const recent = new RecentlyUsed<string, number>(10);
    recent.set('a', 1);
    recent.set('b', 2);
    recent.set('c', 3);
    expect(recent.use('a')).toBe(1);
    expect(recent.peek('b')).toBe(2);
    expect([...recent.values()]).toEqual([2, 3, 1]);
    recent.set('b', 20);
    expect([...recent.values()]).toEqual([3, 1, 20]);
    expect(recent.use('missing')).toBeUndefined();
  });

  it('evicts the least recently used past its limit, skipping those held back, and may stay over it', () => {
    const recent = new RecentlyUsed<string, string>(2);
    for (const key of ['a', 'b', 'c', 'd']) recent.set(key, key);
    expect(recent.evict((value) => value === 'a')).toEqual(['b', 'c']);
    expect([...recent.values()]).toEqual(['a', 'd']);
    recent.set('e', 'e');
    expect(recent.evict(() => true)).toEqual([]);
    expect(recent.size).toBe(3);
    expect(recent.evict()).toEqual(['a']);
    expect([...recent.values()]).toEqual(['d', 'e']);
  });
});
