// The pool of session hosts alone, its hosts UserToolHosts over in-memory host processes: one per
// session and host class, the least recently used idle one ended past the limit, a crashed one
// replaced, idle ones ended, and a reload's renewal that lets running calls finish.
import { describe, expect, it } from 'vitest';
import { HostPool, type HostStarter } from '../../src/tools/user-tools/host-pool.ts';
import type { ToolPermission } from '../../src/tools/user-tools/protocol.ts';
import { UserToolHost } from '../../src/tools/user-tools/user-tool-host.ts';
import { InMemoryHost, loadsEverything, moduleNamed } from '../support/in-memory-host.ts';
import { recordingLogger } from '../support/recording-logger.ts';

/** Starts hosts over in-memory processes that load every module, and keeps them in the order they started. */
class Starts {
  readonly children: InMemoryHost[] = [];
  readonly hosts: UserToolHost[] = [];
  private waiting: (() => void)[] = [];

  readonly starter: HostStarter = async () => {
    const host = await UserToolHost.start({
      modules: [moduleNamed('ping')],
      kv: async () => undefined,
      loadTimeoutMs: 5_000,
      connect: (modules) => {
        const child = new InMemoryHost(modules, { pid: 1000 + this.children.length });
        loadsEverything(child);
        this.children.push(child);
        return child.transport;
      },
    });
    this.hosts.push(host);
    for (const wake of this.waiting.splice(0)) wake();
    return host;
  };

  /** Resolves once `count` hosts have started. */
  async started(count: number): Promise<void> {
    while (this.hosts.length < count) await new Promise<void>((resolve) => this.waiting.push(resolve));
  }
}

const none: ToolPermission[] = [];
const network: ToolPermission[] = ['network'];
const callOptions = { sessionId: 'session-a', signal: new AbortController().signal, timeoutMs: 60_000 };
const endOf = (host: UserToolHost) => new Promise<string>((resolve) => host.once('ended', resolve));

function newPool(options: { maxHosts?: number; idleMs?: number } = {}) {
  const log = recordingLogger();
  return { pool: new HostPool({ logger: log.logger, ...options }), lines: log.lines };
}

describe('HostPool', () => {
  it('starts one host per session and host class, and gives it to every call, concurrent or later', async () => {
    const { pool } = newPool();
    const starts = new Starts();
    const [first, second] = await Promise.all([pool.hostFor('a', none, starts.starter), pool.hostFor('a', none, starts.starter)]);
    expect(second).toBe(first);
    expect(await pool.hostFor('a', none, starts.starter)).toBe(first);
    const networked = await pool.hostFor('a', network, starts.starter);
    const other = await pool.hostFor('b', none, starts.starter);
    expect(new Set([first, networked, other]).size).toBe(3);
    expect(starts.children).toHaveLength(3);
    expect(pool.summaries()).toEqual([
      { sessionId: 'a', permissions: none, state: 'running', pid: 1000 },
      { sessionId: 'a', permissions: network, state: 'running', pid: 1001 },
      { sessionId: 'b', permissions: none, state: 'running', pid: 1002 },
    ]);
    await pool.close();
  });

  it('past maxHosts ends the least recently used host that runs no call', async () => {
    const { pool } = newPool({ maxHosts: 2 });
    const starts = new Starts();
    const a = await pool.hostFor('a', none, starts.starter);
    const b = await pool.hostFor('b', none, starts.starter);
    void a.call('ping', {}, callOptions); // a is the least recently used, but busy
    await starts.children[0]!.next('call');
    const bEnded = endOf(b);
    await pool.hostFor('c', none, starts.starter);
    expect(await bEnded).toBe('ended to make room for another session');
    expect(pool.summaries().map((summary) => summary.sessionId)).toEqual(['a', 'c']);
    expect(a.ended).toBe(false);
    await pool.close();
  });

  it('replaces a host that ends unasked at once; after three quick ends, only a call starts one', async () => {
    const { pool, lines } = newPool();
    const starts = new Starts();
    await pool.hostFor('a', none, starts.starter);
    for (let end = 1; end <= 3; end++) {
      starts.children[end - 1]!.exit({ reason: `crash ${end}` });
      if (end < 3) await starts.started(end + 1);
    }
    await new Promise((resolve) => setImmediate(resolve));
    expect(starts.children).toHaveLength(3);
    expect(pool.summaries()).toEqual([]);
    expect(lines.filter((line) => line.includes('user-tool host ended; starting a new one'))).toHaveLength(3);
    const again = await pool.hostFor('a', none, starts.starter);
    expect(again).toBe(starts.hosts[3]);
    expect(again.ended).toBe(false);
    await pool.close();
  });

  it('on renewal gives each session with a live host of a kept class a new one at once, and ends the old ones once their calls finish', async () => {
    const { pool } = newPool();
    const old = new Starts();
    const oldPlain = await pool.hostFor('a', none, old.starter);
    const oldNetworked = await pool.hostFor('a', network, old.starter);
    const running = oldPlain.call('slow', {}, callOptions);
    const call = await old.children[0]!.next('call');

    const renewed = new Starts();
    let retired = false;
    const networkedEnded = endOf(oldNetworked);
    const retirement = pool.renew((permissions) => permissions.length === 0, () => renewed.starter).then(() => (retired = true));
    await renewed.started(1);
    expect(await networkedEnded).toBe('the tool host was replaced by a reload');
    expect(oldPlain.ended).toBe(false);
    expect(retired).toBe(false);

    old.children[0]!.send({ type: 'result', callId: call.callId, output: 'slow done', success: true });
    expect(await running).toEqual({ output: 'slow done', success: true });
    await retirement;
    expect(oldPlain.ended).toBe(true);
    expect(await pool.hostFor('a', none, renewed.starter)).toBe(renewed.hosts[0]);
    expect(renewed.children).toHaveLength(1);
    await pool.close();
  });

  it("ends a deleted session's hosts and no one else's", async () => {
    const { pool } = newPool();
    const starts = new Starts();
    const a = await pool.hostFor('a', none, starts.starter);
    const aNetworked = await pool.hostFor('a', network, starts.starter);
    const b = await pool.hostFor('b', none, starts.starter);
    await pool.release('a');
    expect([a.ended, aNetworked.ended, b.ended]).toEqual([true, true, false]);
    expect(pool.summaries().map((summary) => summary.sessionId)).toEqual(['b']);
    await pool.close();
  });

  it('ends a host idle for idleMs, not one running a call', async () => {
    const { pool } = newPool({ idleMs: 40 });
    const starts = new Starts();
    const idle = await pool.hostFor('a', none, starts.starter);
    const busy = await pool.hostFor('b', none, starts.starter);
    void busy.call('slow', {}, callOptions);
    expect(await endOf(idle)).toBe('it was idle');
    expect(busy.ended).toBe(false);
    expect(pool.summaries().map((summary) => summary.sessionId)).toEqual(['b']);
    await pool.close();
  });

  it('on close ends every host at once, a retiring one with its call too', async () => {
    const { pool } = newPool();
    const starts = new Starts();
    const retiring = await pool.hostFor('a', none, starts.starter);
    const running = retiring.call('slow', {}, callOptions);
    await starts.children[0]!.next('call');
    const retirement = pool.renew(() => false, () => starts.starter);
    const current = await pool.hostFor('b', none, starts.starter);
    await pool.close();
    await retirement;
    expect(await running).toEqual({ output: 'Error: slow did not finish: the server is shutting down.', success: false });
    expect([retiring.ended, current.ended]).toEqual([true, true]);
  });
});
