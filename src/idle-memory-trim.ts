import type { Server } from 'node:http';
import type { Session } from 'node:inspector';
import { getHeapSpaceStatistics } from 'node:v8';
import type { Logger } from './logger.ts';
import { libc } from './process-hardening/libc.ts';

/** The young generation's reserved and used bytes. */
export interface YoungGeneration {
  size: number;
  used: number;
}

/** Above this the young generation has grown from its start size (1 MB) and can give pages back. */
const grownBytes = 4 * 1024 * 1024;
/** Once start-up's background work is over, any growth counts: the idle figure is the one people see. */
const grownSinceStartBytes = 1 * 1024 * 1024;
/** Less new allocation than this between two looks counts as idle. */
const idleAllocationBytes = 512 * 1024;

export function readYoungGeneration(): YoungGeneration {
  const space = getHeapSpaceStatistics().find((candidate) => candidate.space_name === 'new_space');
  return { size: space?.space_size ?? 0, used: space?.space_used_size ?? 0 };
}

export interface IdleMemoryTrimOptions {
  /** Runs a collection that gives memory back to the system. */
  collect: () => Promise<void>;
  /** False while a turn runs: a slow stream allocates little, and must not pay for a collection. */
  quiet: () => boolean;
  read?: () => YoungGeneration;
}

/**
 * Quiet looks in a row before a collection: one after start-up, which is over once it is quiet;
 * more after later work, so a pause of some tens of milliseconds does not land in every gap
 * between a person's messages.
 */
const quietLooksAfterStart = 1;
const quietLooksAfterWork = 10;

/**
 * V8 grows the young generation to 2 × 16 MB while start-up or a burst of streams allocates fast,
 * and shrinks it, or compacts the old generation, only in a collection that runs while allocation
 * is slow. An idle server runs no collection, so it kept those pages for good: about 40 MB of the
 * idle RSS (bench/RESULTS.md, issue 26). `check()` asks for one memory-reducing collection once
 * the process has been quiet after work: no turn runs and no request was served (`quiet`,
 * quietWhenNothingServed), no young collection ran and less than 512 KB was allocated since the
 * previous look, and the young generation is grown. The next one
 * waits for more work, so a server that stays idle is left alone.
 */
export class IdleMemoryTrim {
  private previousUsed: number;
  /** Whether the process did work since it last collected (start-up counts). */
  private worked = true;
  private quietLooks = 0;
  private collections = 0;
  private collecting = false;
  /** Start-up's background work ended since the last collection (startUpFinished). */
  private startUpJustFinished = false;
  private readonly read: () => YoungGeneration;

  constructor(private readonly options: IdleMemoryTrimOptions) {
    this.read = options.read ?? readYoungGeneration;
    this.previousUsed = this.read().used;
  }

  /** Whether it started a collection. */
  check(): boolean {
    if (this.collecting) return false;
    const { size, used } = this.read();
    const quiet = used >= this.previousUsed && used - this.previousUsed < idleAllocationBytes && this.options.quiet();
    this.previousUsed = used;
    if (!quiet) {
      this.worked = true;
      this.quietLooks = 0;
      return false;
    }
    this.quietLooks++;
    const afterStart = this.collections === 0 || this.startUpJustFinished;
    const needed = afterStart ? quietLooksAfterStart : quietLooksAfterWork;
    if (!this.worked || size <= (afterStart ? grownSinceStartBytes : grownBytes) || this.quietLooks < needed) return false;
    this.worked = false;
    this.startUpJustFinished = false;
    this.collections++;
    this.collecting = true;
    void this.options.collect().finally(() => {
      this.collecting = false;
      this.previousUsed = this.read().used;
    });
    return true;
  }

  /**
   * What start-up still did in the background after its first quiet moment (the backend's first
   * check, the user tools' build, the speech check: what the start-up summary waits for) grows the
   * young generation again, by less than later work has to: the next quiet look collects once more.
   */
  startUpFinished(): void {
    this.worked = true;
    this.startUpJustFinished = true;
  }
}

let session: Session | undefined;

/**
 * The collection V8 runs when the system is short of memory: the young generation shrinks to its
 * start size and the old one is compacted, in one pause of some tens of milliseconds. Node offers
 * it through its in-process inspector session (no port is opened), not `global.gc`. The session
 * stays connected: disconnecting inside the reply, with a worker thread alive, deadlocks Node 20.
 * False, doing nothing, in a Node built without the inspector, where importing it throws.
 */
export async function collectGarbageGivingMemoryBack(): Promise<boolean> {
  if (!process.features.inspector) return false;
  if (!session) {
    const { Session } = await import('node:inspector');
    session = new Session();
    session.connect();
  }
  const connected = session;
  await new Promise<void>((resolve) => connected.post('HeapProfiler.collectGarbage', () => resolve()));
  return true;
}

const megabytes = (bytes: number) => Math.round((bytes / 1024 / 1024) * 10) / 10;

/**
 * The trim's `quiet`: no turn runs and no request was served since the previous look. A
 * request is work too: the collection's pause (some tens of milliseconds) must not land in a
 * stream of requests (bench 18 saw it in its storm's).
 */
export function quietWhenNothingServed(server: Server, busy: () => boolean): () => boolean {
  let requests = 0;
  let requestsAtLastLook = 0;
  server.on('request', () => requests++);
  return () => {
    const served = requests !== requestsAtLastLook;
    requestsAtLastLook = requests;
    return !served && !busy();
  };
}

/** Looks every `intervalMs` for the life of the process; the timer does not keep it alive. */
export function startIdleMemoryTrim(quiet: () => boolean, logger: Logger, intervalMs = 500): IdleMemoryTrim {
  const collect = async () => {
    const before = { young: readYoungGeneration().size, rss: process.memoryUsage.rss() };
    const startedAt = performance.now();
    if (!(await collectGarbageGivingMemoryBack())) return;
    // What V8 and the parser freed goes back to glibc's heaps; only this gives those pages up.
    const library = libc();
    if (typeof library !== 'string') library.trimMallocHeaps();
    const pauseMs = Math.round(performance.now() - startedAt);
    const after = { young: readYoungGeneration().size, rss: process.memoryUsage.rss() };
    logger.debug(
      { young_mb: [megabytes(before.young), megabytes(after.young)], rss_mb: [megabytes(before.rss), megabytes(after.rss)], pause_ms: pauseMs },
      'idle: gave memory back to the system',
    );
  };
  const trim = new IdleMemoryTrim({ collect, quiet });
  setInterval(() => trim.check(), intervalMs).unref();
  return trim;
}
