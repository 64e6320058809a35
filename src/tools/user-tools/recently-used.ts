/**
 * A map that keeps its entries in the order they were last used, least recently used first,
 * and drops the oldest past a limit. Unlike a plain LRU cache it never drops an entry on its
 * own: `evict` does, skipping those the caller holds back (a host still running a call), so
 * the map may stay over its limit until they can go.
 */
export class RecentlyUsed<Key, Value> {
  private readonly entries = new Map<Key, Value>();

  constructor(private readonly limit: number) {}

  get size(): number {
    return this.entries.size;
  }

  /** The value of `key`, which becomes the most recently used. */
  use(key: Key): Value | undefined {
    const value = this.entries.get(key);
    if (value !== undefined) {
      this.entries.delete(key);
      this.entries.set(key, value);
    }
    return value;
  }

  /** The value of `key`, leaving the order as it is. */
  peek(key: Key): Value | undefined {
    return this.entries.get(key);
  }

  /** Adds or replaces `key`, as the most recently used. */
  set(key: Key, value: Value): void {
    this.entries.delete(key);
    this.entries.set(key, value);
  }

  delete(key: Key): boolean {
    return this.entries.delete(key);
  }

  clear(): void {
    this.entries.clear();
  }

  /** Least recently used first. */
  values(): IterableIterator<Value> {
    return this.entries.values();
  }

  /** Removes entries, least recently used first, until at most the limit are left, never one `keep` holds back; answers the removed. */
  evict(keep: (value: Value) => boolean = () => false): Value[] {
    const removed: Value[] = [];
    for (const [key, value] of this.entries) {
      if (this.entries.size <= this.limit) break;
      if (keep(value)) continue;
      this.entries.delete(key);
      removed.push(value);
    }
    return removed;
  }
}
