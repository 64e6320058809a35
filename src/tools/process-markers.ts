import { createHash, randomBytes } from 'node:crypto';
import { readdirSync, readFileSync, realpathSync } from 'node:fs';
import path from 'node:path';
import type { Logger } from '../logger.ts';

/**
 * Finding a tool's processes again after `setsid`, a double fork or the server's death.
 *
 * Every process a tool starts (terminal, code_exec) gets `HEARTH_PROCESS=<instance>:<session>:<call>`
 * in its environment, and every process it starts inherits it, whatever session or process
 * group it moves to. `/proc/<pid>/environ` (readable for the server's own user's processes)
 * finds them: a stopped call's stragglers, a deleted session's background jobs, and at start
 * whatever a crashed run left behind. `<instance>` is a hash of the resolved DATA_DIR, so two
 * Hearths on one machine never touch each other's processes.
 *
 * No ledger is written to disk: the marker finds every process a ledger of process groups
 * would, and more (a `setsid` child leaves the group). What a ledger could add, group members
 * that cleared their environment after the leader ended, it could not tell apart from a new
 * group that reuses the number, so it would have to leave them anyway.
 *
 * Before a signal, the process's start time (field 22 of /proc/<pid>/stat) is read again and
 * compared with the one seen next to the marker: a pid that now names another process is
 * never signalled. Without /proc (not Linux) nothing is found and nothing is signalled.
 */
export const processMarkerVariable = 'HEARTH_PROCESS';

const markerPrefix = Buffer.from(`${processMarkerVariable}=`);
const procRootDefault = '/proc';
/** How long ending processes waits for SIGKILL to land before it reports them ended anyway. */
const endWaitMs = 2_000;

export interface ProcessMarker {
  instance: string;
  sessionId: string;
  callId: string;
}

/** `<instance>:<session>:<call>`; the session id may itself hold colons, the other two never do. */
export function parseProcessMarker(value: string): ProcessMarker | undefined {
  const first = value.indexOf(':');
  const last = value.lastIndexOf(':');
  if (first <= 0 || last === first || last === value.length - 1) return undefined;
  return { instance: value.slice(0, first), sessionId: value.slice(first + 1, last), callId: value.slice(last + 1) };
}

/** The folder resolved through links as far as it exists, so a DATA_DIR created later names the same instance. */
function canonicalFolder(folder: string): string {
  let existing = path.resolve(folder);
  const rest: string[] = [];
  for (;;) {
    try {
      return path.join(realpathSync(existing), ...rest);
    } catch {
      const parent = path.dirname(existing);
      if (parent === existing) return path.resolve(folder);
      rest.unshift(path.basename(existing));
      existing = parent;
    }
  }
}

/** Names this installation in markers: 16 hex digits of the SHA-256 of the resolved DATA_DIR. */
export function hearthInstance(dataDir: string): string {
  return createHash('sha256').update(canonicalFolder(dataDir)).digest('hex').slice(0, 16);
}

export interface ProcessIdentity {
  pid: number;
  /** Field 22 of /proc/<pid>/stat: clock ticks after boot. With the pid it names one process. */
  startTime: string;
  parentId: number;
  groupId: number;
  state: string;
}

export interface MarkedProcess extends ProcessIdentity {
  marker: string;
}

function parseStat(pid: number, text: string): ProcessIdentity | undefined {
  // The command name (field 2) may hold spaces and parentheses: fields are counted after its last ')'.
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
  const [state, parent, group] = fields;
  const startTime = fields[19];
  if (state === undefined || parent === undefined || group === undefined || startTime === undefined) return undefined;
  return { pid, startTime, parentId: Number(parent), groupId: Number(group), state };
}

function readIdentitySync(procRoot: string, pid: number): ProcessIdentity | undefined {
  try {
    return parseStat(pid, readFileSync(`${procRoot}/${pid}/stat`, 'utf8'));
  } catch {
    return undefined;
  }
}

function markerIn(environ: Buffer): string | undefined {
  let at = environ.indexOf(markerPrefix);
  while (at > 0 && environ[at - 1] !== 0) at = environ.indexOf(markerPrefix, at + 1);
  if (at < 0) return undefined;
  const start = at + markerPrefix.length;
  const end = environ.indexOf(0, start);
  return environ.toString('utf8', start, end < 0 ? environ.length : end);
}

/** This process and its ancestors: a server started by a tool of the same Hearth must not end itself. */
function ownLineage(procRoot: string): Set<number> {
  const lineage = new Set<number>();
  for (let pid = process.pid; pid > 1 && !lineage.has(pid); ) {
    lineage.add(pid);
    const identity = readIdentitySync(procRoot, pid);
    if (!identity) break;
    pid = identity.parentId;
  }
  return lineage;
}

export interface ScanOptions {
  /** Where procfs is mounted; tests point it elsewhere. */
  procRoot?: string;
}

/** Processes looked at between two turns of the event loop: reading /proc synchronously is several times faster than through the thread pool. */
const scanSliceSize = 64;

function readMarker(procRoot: string, pid: number): string | undefined {
  try {
    return markerIn(readFileSync(`${procRoot}/${pid}/environ`));
  } catch {
    // Ended meanwhile, a kernel thread, or another user's process.
    return undefined;
  }
}

/**
 * The live processes whose environment carries a marker `accept` takes, the server and its
 * ancestors excepted; undefined when /proc cannot be read. Processes whose environment the
 * server's user may not read (another user's, or ones that made themselves undumpable) are not seen.
 */
export async function findMarkedProcesses(accept: (marker: string) => boolean, options: ScanOptions = {}): Promise<MarkedProcess[] | undefined> {
  const procRoot = options.procRoot ?? procRootDefault;
  let entries: string[];
  try {
    entries = readdirSync(procRoot);
  } catch {
    return undefined;
  }
  const excluded = ownLineage(procRoot);
  const found: MarkedProcess[] = [];
  let examined = 0;
  for (const entry of entries) {
    const first = entry.charCodeAt(0);
    if (first < 48 || first > 57) continue;
    if (++examined % scanSliceSize === 0) await new Promise((resolve) => setImmediate(resolve));
    const pid = Number(entry);
    if (excluded.has(pid)) continue;
    // Only a process carrying the marker costs more than one read.
    const marker = readMarker(procRoot, pid);
    if (marker === undefined || !accept(marker)) continue;
    const identity = readIdentitySync(procRoot, pid);
    // Read again: the start time must belong to the process whose environment carried the marker.
    if (!identity || identity.state === 'Z' || readMarker(procRoot, pid) !== marker) continue;
    found.push({ ...identity, marker });
  }
  return found;
}

/**
 * Signals `target` only if its pid still names the process that started at `startTime`; a
 * process group leader's whole group is signalled too (members that cleared their environment
 * stay in it). True when the signal was sent.
 */
export function signalProcess(target: Pick<ProcessIdentity, 'pid' | 'startTime'>, signal: NodeJS.Signals, options: ScanOptions = {}): boolean {
  const current = readIdentitySync(options.procRoot ?? procRootDefault, target.pid);
  if (!current || current.startTime !== target.startTime || current.state === 'Z') return false;
  if (current.groupId === target.pid) {
    try {
      process.kill(-target.pid, signal);
    } catch {
      // The group has no other member left.
    }
  }
  try {
    process.kill(target.pid, signal);
    return true;
  } catch {
    return false;
  }
}

function hasEnded(procRoot: string, target: ProcessIdentity): boolean {
  const current = readIdentitySync(procRoot, target.pid);
  return !current || current.startTime !== target.startTime || current.state === 'Z';
}

/**
 * Sends `signal` to every marked process `accept` takes and gives how many got it (undefined
 * without /proc). After SIGKILL it waits, up to two seconds, until they have ended.
 */
export async function signalMarkedProcesses(
  accept: (marker: string) => boolean,
  signal: NodeJS.Signals,
  options: ScanOptions = {},
): Promise<number | undefined> {
  const procRoot = options.procRoot ?? procRootDefault;
  const found = await findMarkedProcesses(accept, options);
  if (found === undefined) return undefined;
  const signalled = found.filter((target) => signalProcess(target, signal, options));
  if (signal === 'SIGKILL') {
    const deadline = Date.now() + endWaitMs;
    while (signalled.some((target) => !hasEnded(procRoot, target)) && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  }
  return signalled.length;
}

/** Signals the processes carrying exactly this call's marker (a stopped call's `setsid` children). */
export function signalCallProcesses(marker: string, signal: NodeJS.Signals, options: ScanOptions = {}): Promise<number | undefined> {
  return signalMarkedProcesses((found) => found === marker, signal, options);
}

/** Per installation, the sessions whose calls started processes in this server's lifetime (a previous run's were ended at start). */
const sessionsWithProcesses = new Map<string, Set<string>>();

/** The markers of one Hearth installation (one DATA_DIR). */
export class ProcessMarkers {
  readonly instance: string;
  private readonly sessions: Set<string>;

  constructor(
    dataDir: string,
    private readonly options: ScanOptions = {},
  ) {
    this.instance = hearthInstance(dataDir);
    let sessions = sessionsWithProcesses.get(this.instance);
    if (!sessions) sessionsWithProcesses.set(this.instance, (sessions = new Set()));
    this.sessions = sessions;
  }

  /** A new marker for one call of `sessionId`: stopping the call ends only what it started. */
  forCall(sessionId: string): string {
    this.sessions.add(sessionId);
    return `${this.instance}:${sessionId}:${randomBytes(6).toString('hex')}`;
  }

  /**
   * SIGKILLs every process a call of `sessionId` started; how many (undefined without /proc).
   * A session none of whose calls started a process since the server started costs no scan.
   */
  endSession(sessionId: string): Promise<number | undefined> {
    if (!this.sessions.delete(sessionId)) return Promise.resolve(0);
    return signalMarkedProcesses((marker) => {
      const parsed = parseProcessMarker(marker);
      return parsed?.instance === this.instance && parsed.sessionId === sessionId;
    }, 'SIGKILL', this.options);
  }

  /** At shutdown: SIGKILLs what this run's calls left running; no scan when none started a process. */
  endStarted(): Promise<number | undefined> {
    return this.sessions.size === 0 ? Promise.resolve(0) : this.endAll();
  }

  /** SIGKILLs every process a tool of this installation started, in this run or an earlier one. */
  endAll(): Promise<number | undefined> {
    this.sessions.clear();
    return signalMarkedProcesses((marker) => parseProcessMarker(marker)?.instance === this.instance, 'SIGKILL', this.options);
  }
}

/**
 * At start, before any tool runs: whatever a previous run of this installation left running
 * (the server was killed, or crashed, mid-call) is an orphan nobody will read; SIGKILL it.
 */
export async function endLeftoverProcesses(dataDir: string, logger: Pick<Logger, 'warn' | 'debug'>, options: ScanOptions = {}): Promise<number | undefined> {
  const started = performance.now();
  const ended = await new ProcessMarkers(dataDir, options).endAll();
  const milliseconds = Math.round(performance.now() - started);
  if (ended === undefined) {
    logger.warn(`${options.procRoot ?? procRootDefault} cannot be read: tool processes a previous run left behind are not looked for, and a stopped call's setsid children are not ended`);
  } else if (ended > 0) {
    logger.warn({ ended, milliseconds }, `ended ${ended} tool process${ended === 1 ? '' : 'es'} a previous run left running`);
  } else {
    logger.debug({ milliseconds }, 'no tool process left running by a previous run');
  }
  return ended;
}
