import type { Logger } from '../../logger.ts';
import { hostClass } from './permissions.ts';
import type { ToolPermission } from './protocol.ts';
import { RecentlyUsed } from './recently-used.ts';
import type { UserToolHost } from './user-tool-host.ts';

export interface HostPoolOptions {
  logger: Logger;
  /** Session hosts kept at most; the least recently used idle one is ended for a new one. */
  maxHosts?: number;
  /** A session host idle this long is ended. */
  idleMs?: number;
}

/** What `hosts()` tells about one session host. */
export interface HostSummary {
  /** The session whose folder it may write (a sub-agent's calls run in its parent's host). */
  sessionId: string;
  permissions: ToolPermission[];
  state: 'starting' | 'running';
  pid?: number;
}

/** Starts a host for one session's tools of one host class, from the generation of tools it was made for. */
export type HostStarter = () => Promise<UserToolHost>;

/** One session's host for one set of permissions. */
interface Slot {
  key: string;
  owner: string;
  permissions: ToolPermission[];
  /** Starts its host, the first time and again after a crash. */
  start: HostStarter;
  host: UserToolHost | undefined;
  starting: Promise<UserToolHost> | undefined;
  quickEnds: number;
}

const defaultMaxHosts = 4;
const defaultIdleMs = 5 * 60_000;
/** How long a replaced host may finish its running calls. */
const retireWaitMs = 5_000;
/** A host that ends sooner than this after starting, three times in a row, is started again only when called. */
const quickEndMs = 2_000;
const maxQuickEnds = 3;

/**
 * The session hosts of the current generation of user tools, one per session that calls user
 * tools and set of granted permissions. A host is started on a session's first call, kept while
 * used (at most `maxHosts`, least recently used ended first, idle ones ended after `idleMs`),
 * replaced at once when it ends unasked, and retired when a reload renews the pool.
 */
export class HostPool {
  private readonly slots: RecentlyUsed<string, Slot>;
  private readonly retiring = new Set<UserToolHost>();
  /** Starts, retirements and endings still running: close waits for them. */
  private readonly inFlight = new Set<Promise<unknown>>();
  private idleSweep: NodeJS.Timeout | undefined;
  private closed = false;

  constructor(private readonly options: HostPoolOptions) {
    this.slots = new RecentlyUsed(options.maxHosts ?? defaultMaxHosts);
  }

  /** The running or starting host of `owner` for tools granted `permissions`; starts one with `start` when there is none. */
  hostFor(owner: string, permissions: ToolPermission[], start: HostStarter): Promise<UserToolHost> {
    const key = `${owner}\0${hostClass(permissions)}`;
    let slot = this.slots.use(key);
    if (slot) {
      if (slot.host && !slot.host.ended) return Promise.resolve(slot.host);
      if (slot.starting) return slot.starting;
    } else {
      slot = { key, owner, permissions, start, host: undefined, starting: undefined, quickEnds: 0 };
      this.slots.set(key, slot);
      this.makeRoom(slot);
    }
    return this.startSlot(slot);
  }

  /** The hosts, least recently used first. */
  summaries(): HostSummary[] {
    return [...this.slots.values()].flatMap((slot) => {
      const running = slot.host !== undefined && !slot.host.ended;
      if (!running && slot.starting === undefined) return [];
      const pid = running ? slot.host!.pid : undefined;
      return [{ sessionId: slot.owner, permissions: slot.permissions, state: running ? 'running' : 'starting', ...(pid !== undefined && { pid }) }];
    });
  }

  /** Ends the hosts of a deleted session. */
  async release(owner: string): Promise<void> {
    const ended = [...this.slots.values()].filter((slot) => slot.owner === owner);
    for (const slot of ended) this.slots.delete(slot.key);
    await Promise.all(ended.map((slot) => this.track(this.endSlot(slot, 'its session was deleted'))));
  }

  /**
   * Moves to a new generation of tools. Each session that had a live host for a host class that
   * `keeps` gets a new one at once from `starterFor`, so its next call does not wait for it. The
   * old hosts finish their running calls and end; resolves once they have.
   */
  renew(keeps: (permissions: ToolPermission[]) => boolean, starterFor: (owner: string, permissions: ToolPermission[]) => HostStarter): Promise<void> {
    const previous = [...this.slots.values()];
    this.slots.clear();
    for (const slot of previous) {
      const live = slot.starting !== undefined || (slot.host !== undefined && !slot.host.ended);
      if (live && keeps(slot.permissions)) void this.hostFor(slot.owner, slot.permissions, starterFor(slot.owner, slot.permissions)).catch(() => undefined);
    }
    return this.track(this.retire(previous));
  }

  /** Ends every host, not waiting for running calls, once the starts under way have finished. */
  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.idleSweep);
    for (const host of this.retiring) await host.terminate('the server is shutting down');
    while (this.inFlight.size > 0) await Promise.allSettled([...this.inFlight]);
    const slots = [...this.slots.values()];
    this.slots.clear();
    await Promise.all(slots.map((slot) => this.endSlot(slot, 'the server is shutting down')));
  }

  private track<T>(work: Promise<T>): Promise<T> {
    this.inFlight.add(work);
    const forget = () => this.inFlight.delete(work);
    work.then(forget, forget);
    return work;
  }

  /** Lets the hosts of `slots` finish their calls and ends them. */
  private async retire(slots: Slot[]): Promise<void> {
    await Promise.all(
      slots.map(async (slot) => {
        const host = slot.host ?? (await slot.starting?.catch(() => undefined));
        if (!host) return;
        if (this.closed) return host.terminate('the server is shutting down');
        this.retiring.add(host);
        await host.retire(retireWaitMs);
        this.retiring.delete(host);
      }),
    );
  }

  private startSlot(slot: Slot): Promise<UserToolHost> {
    slot.host = undefined;
    const starting = this.track(this.launch(slot));
    slot.starting = starting;
    starting
      .finally(() => {
        if (slot.starting === starting) slot.starting = undefined;
      })
      .catch(() => undefined);
    this.startIdleSweep();
    return starting;
  }

  private async launch(slot: Slot): Promise<UserToolHost> {
    const host = await slot.start();
    if (this.closed) {
      await host.terminate('the server is shutting down');
      return host;
    }
    slot.host = host;
    this.watchForEnd(slot, host);
    return host;
  }

  /** Past `maxHosts`, ends hosts that run no call, least recently used first. */
  private makeRoom(keep?: Slot): void {
    const busy = (slot: Slot) => slot === keep || slot.starting !== undefined || (slot.host !== undefined && slot.host.inFlight > 0);
    for (const slot of this.slots.evict(busy)) void this.track(this.endSlot(slot, 'ended to make room for another session'));
  }

  private async endSlot(slot: Slot, reason: string): Promise<void> {
    const host = slot.host ?? (await slot.starting?.catch(() => undefined));
    await host?.terminate(reason);
  }

  private startIdleSweep(): void {
    if (this.idleSweep !== undefined) return;
    const idleMs = this.options.idleMs ?? defaultIdleMs;
    this.idleSweep = setInterval(() => {
      for (const slot of [...this.slots.values()]) {
        const host = slot.host;
        if (!host || host.ended || host.inFlight > 0 || Date.now() - host.lastActive < idleMs) continue;
        this.slots.delete(slot.key);
        void this.track(host.terminate('it was idle'));
      }
      // Hosts started while every other one was busy may have left more than maxHosts.
      this.makeRoom();
    }, Math.min(idleMs / 2, 30_000));
    this.idleSweep.unref();
  }

  /**
   * A host that crashed, was ended for a stuck tool or for its memory is replaced at once with
   * the modules that loaded (never one with a verdict); calls that arrive meanwhile wait for it.
   */
  private watchForEnd(slot: Slot, host: UserToolHost): void {
    host.once('ended', (reason) => {
      if (this.closed || this.slots.peek(slot.key) !== slot || slot.host !== host) return;
      const stderr = host.stderr.trim().split('\n').slice(-20).join('\n');
      this.options.logger.warn({ reason, session: slot.owner, ...(stderr !== '' && { stderr }) }, 'user-tool host ended; starting a new one');
      slot.quickEnds = performance.now() - host.startedAt < quickEndMs ? slot.quickEnds + 1 : 0;
      slot.host = undefined;
      if (slot.quickEnds < maxQuickEnds) void this.startSlot(slot).catch((error: unknown) => this.options.logger.error({ err: error }, 'cannot start a new user-tool host'));
    });
  }
}
