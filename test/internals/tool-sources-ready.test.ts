// registry.ready(): each source that is still loading after a start gives the registry its own
// wait, and a turn waits for all of them, each bounded on its own (fake timers: no real waiting).
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ToolRegistry } from '../../src/tools/tool-registry.ts';
import { waitForToolSources } from '../../src/tools/tool-sources-ready.ts';

beforeEach(() => vi.useFakeTimers());
afterEach(() => vi.useRealTimers());

/** Whether `promise` has settled once the microtasks queued so far have run. */
async function settled(promise: Promise<unknown>): Promise<boolean> {
  let done = false;
  void promise.then(() => (done = true));
  await vi.advanceTimersByTimeAsync(0);
  return done;
}

const never = () => new Promise<never>(() => {});

describe('registry.ready()', () => {
  it('settles at once when no source gave it a wait', async () => {
    expect(await settled(new ToolRegistry().ready())).toBe(true);
  });

  it('waits for the user tools to load, and no longer', async () => {
    let loaded!: () => void;
    const registry = new ToolRegistry();
    waitForToolSources(registry, {
      userTools: { whenLoaded: () => new Promise((resolve) => (loaded = () => resolve({ loaded: [], errors: [] }))), loadTimeoutMs: 1_000 },
      mcp: { ready: async () => {} },
    });
    const ready = registry.ready();
    expect(await settled(ready)).toBe(false);
    loaded();
    expect(await settled(ready)).toBe(true);
  });

  it('gives up on user tools that never load after their load timeout and 3 s more, and on a failed load at once', async () => {
    const registry = new ToolRegistry();
    waitForToolSources(registry, { userTools: { whenLoaded: never, loadTimeoutMs: 1_000 }, mcp: { ready: async () => {} } });
    const ready = registry.ready();
    await vi.advanceTimersByTimeAsync(3_999);
    expect(await settled(ready)).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    expect(await settled(ready)).toBe(true);

    const failing = new ToolRegistry();
    waitForToolSources(failing, { userTools: { whenLoaded: () => Promise.reject(new Error('no TOOLS_DIR')), loadTimeoutMs: 1_000 }, mcp: { ready: async () => {} } });
    expect(await settled(failing.ready())).toBe(true);
  });

  it('asks the MCP servers to be ready within 5 s, on every turn, beside the user tools', async () => {
    const limits: number[] = [];
    let connected!: () => void;
    const registry = new ToolRegistry();
    waitForToolSources(registry, {
      userTools: { whenLoaded: async () => ({ loaded: [], errors: [] }), loadTimeoutMs: 1_000 },
      mcp: {
        ready: (limitMs) => {
          limits.push(limitMs);
          return limits.length === 1 ? new Promise((resolve) => (connected = resolve)) : Promise.resolve();
        },
      },
    });
    const ready = registry.ready();
    expect(await settled(ready)).toBe(false);
    connected();
    expect(await settled(ready)).toBe(true);
    await registry.ready();
    expect(limits).toEqual([5_000, 5_000]);
  });
});
