import { AsyncLocalStorage } from 'node:async_hooks';
import type { Lane } from './concurrency-gate.ts';

/**
 * How the model calls made inside some work wait for a place at their backend: a person's
 * run is `interactive`, a scheduled or heartbeat run and background work (memory) are
 * `background`. Carried by the async context, so every call of a run (rounds, planning,
 * compression, sub-agents) waits in the run's lane without each caller passing it on.
 */
export interface CallLane {
  lane: Lane;
  /** `true` when a call has to wait for a place, `false` once it got one. */
  onQueued?: (queued: boolean) => void;
}

const storage = new AsyncLocalStorage<CallLane>();

const unattended: CallLane = { lane: 'background' };

export function inCallLane<T>(callLane: CallLane, work: () => T): T {
  return storage.run(callLane, work);
}

/** The lane of the work calling now; work nobody entered a lane for is background. */
export function currentCallLane(): CallLane {
  return storage.getStore() ?? unattended;
}
