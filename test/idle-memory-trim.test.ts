import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { createServer as createHttpServer } from 'node:http';
import { describe, expect, it } from 'vitest';
import { collectGarbageGivingMemoryBack, IdleMemoryTrim, quietWhenNothingServed, readYoungGeneration, type YoungGeneration } from '../src/idle-memory-trim.ts';

const megabyte = 1024 * 1024;

/** A young generation whose figures the test sets; a collection shrinks it as V8 does. */
function scriptedHeap(start: YoungGeneration) {
  const heap = { ...start, collections: 0, quiet: true };
  const trim = new IdleMemoryTrim({
    collect: async () => {
      heap.collections++;
      heap.size = 1 * megabyte;
      heap.used = 0;
    },
    quiet: () => heap.quiet,
    read: () => ({ size: heap.size, used: heap.used }),
  });
  /** A look after a quiet interval: a little allocated, no collection. */
  const quietLook = () => {
    heap.used += 100 * 1024;
    return trim.check();
  };
  /** Work that grows the young generation again. */
  const work = () => {
    heap.size = 32 * megabyte;
    heap.used += 5 * megabyte;
    return trim.check();
  };
  return { heap, trim, quietLook, work };
}

const settle = () => new Promise((resolve) => setImmediate(resolve));

describe('IdleMemoryTrim', () => {
  it('collects at the first quiet look after start-up, then only after more work and ten quiet looks', async () => {
    const { heap, quietLook, work } = scriptedHeap({ size: 32 * megabyte, used: 8 * megabyte });
    expect(quietLook()).toBe(true);
    await settle();
    expect(quietLook()).toBe(false);
    expect(quietLook()).toBe(false);
    expect(heap.collections).toBe(1);
    expect(work()).toBe(false);
    const looks = Array.from({ length: 10 }, () => quietLook());
    expect(looks).toEqual([...Array<boolean>(9).fill(false), true]);
    await settle();
    expect(heap.collections).toBe(2);
    // Work in the middle of the quiet looks starts the count again.
    expect(work()).toBe(false);
    for (let look = 0; look < 5; look++) quietLook();
    expect(work()).toBe(false);
    for (let look = 0; look < 9; look++) expect(quietLook()).toBe(false);
    expect(quietLook()).toBe(true);
  });

  it('leaves a busy process alone: a young collection ran, 512 KB or more was allocated, or a turn runs', () => {
    const { heap, trim, quietLook } = scriptedHeap({ size: 32 * megabyte, used: 8 * megabyte });
    heap.used = 2 * megabyte;
    expect(trim.check()).toBe(false);
    heap.used += 1 * megabyte;
    expect(trim.check()).toBe(false);
    heap.quiet = false;
    expect(quietLook()).toBe(false);
    expect(heap.collections).toBe(0);
    heap.quiet = true;
    expect(quietLook()).toBe(true);
  });

  it('collects once more at the first quiet look after start-up has finished, however little the young generation grew', async () => {
    const { heap, trim, quietLook } = scriptedHeap({ size: 32 * megabyte, used: 8 * megabyte });
    expect(quietLook()).toBe(true);
    await settle();
    // The backend's first check and the user tools' build, still running, grow it to 4 MB.
    heap.size = 4 * megabyte;
    heap.used += 3 * megabyte;
    expect(trim.check()).toBe(false);
    expect(quietLook()).toBe(false);
    trim.startUpFinished();
    expect(quietLook()).toBe(true);
    await settle();
    expect(heap.collections).toBe(2);
    // Later growth as small as that waits for the young generation to grow past 4 MB.
    heap.size = 4 * megabyte;
    heap.used += 3 * megabyte;
    trim.check();
    for (let look = 0; look < 12; look++) expect(quietLook()).toBe(false);
    expect(heap.collections).toBe(2);
  });

  it('does nothing while the young generation is at its start size', () => {
    const { heap, quietLook } = scriptedHeap({ size: 1 * megabyte, used: 200 * 1024 });
    expect(quietLook()).toBe(false);
    expect(heap.collections).toBe(0);
  });
});

// The built server, with its worker threads, is trimmed end to end in test/built-start.test.ts.
describe('collectGarbageGivingMemoryBack', () => {
  it('shrinks a grown young generation, each time it is asked', async () => {
    for (let round = 0; round < 2; round++) {
      // Objects that survive a few young collections make V8 grow the young generation.
      let kept: object[] = [];
      for (let index = 0; index < 400_000; index++) kept.push({ index, text: `item ${index}` });
      const grown = readYoungGeneration().size;
      kept = [];
      expect(grown).toBeGreaterThan(4 * megabyte);
      expect(await collectGarbageGivingMemoryBack()).toBe(true);
      expect(readYoungGeneration().size).toBeLessThan(grown / 2);
      expect(kept).toHaveLength(0);
    }
  });
});

describe('libc().trimMallocHeaps', () => {
  it('is bound on this glibc system and gives free heap pages back', async () => {
    const { libc } = await import('../src/process-hardening/libc.ts');
    const library = libc();
    if (typeof library === 'string') throw new Error(library);
    expect(library.trimMallocHeaps()).toBe(true);
  });
});

describe('quietWhenNothingServed', () => {
  it('is quiet only when no request was served and no turn runs since the previous look', async () => {
    const server = createHttpServer((_request, response) => response.end('ok'));
    let busy = false;
    const quiet = quietWhenNothingServed(server, () => busy);
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    try {
      expect(quiet()).toBe(true);
      const { port } = server.address() as AddressInfo;
      await (await fetch(`http://127.0.0.1:${port}/`)).text();
      expect(quiet()).toBe(false);
      expect(quiet()).toBe(true);
      busy = true;
      expect(quiet()).toBe(false);
    } finally {
      server.closeAllConnections();
      server.close();
    }
  });
});
