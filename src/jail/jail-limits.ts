import { accessSync, constants, existsSync, mkdirSync, readdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import type { Config } from '../config.ts';

/**
 * What one jailed call may use (docs/security.md, *The jail*), in the units a person reads. They
 * are set twice where the machine allows: rlimits on every process of the call (always), and a
 * control group per call that counts the call's processes and memory together (where Hearth may
 * create one). rlimits alone cannot stop a fork bomb run as root: the kernel does not apply
 * RLIMIT_NPROC to uid 0.
 */
export interface JailLimits {
  processes: number;
  memoryMb: number;
  tmpMb: number;
  /** The largest file a call may write, anywhere (its /tmp is on disk where no sized tmpfs exists). */
  fileSizeMb: number;
  openFiles: number;
}

const openFiles = 1024;

export function jailLimits(config: Config): JailLimits {
  return { processes: config.JAIL_MAX_PROCESSES, memoryMb: config.JAIL_MAX_MEMORY_MB, tmpMb: config.JAIL_TMP_MB, fileSizeMb: config.JAIL_TMP_MB, openFiles };
}

const mebibyte = 1024 * 1024;

/**
 * `prlimit` arguments up to `--`. RLIMIT_DATA rather than RLIMIT_AS bounds memory: V8 and
 * Python reserve far more address space than they use, and RLIMIT_DATA counts what can be written
 * (private and anonymous mappings), so an allocation fails where memory would really be taken.
 * RLIMIT_NPROC counts every task of the real user (see ProcessCeiling).
 * CPU time applies to calls that end (terminal, code_exec), not to servers that stay up.
 */
export function rlimitArguments(limits: JailLimits, cpuSeconds?: number): string[] {
  return [
    'prlimit',
    `--nproc=${limits.processes}`,
    `--data=${limits.memoryMb * mebibyte}`,
    `--fsize=${limits.fileSizeMb * mebibyte}`,
    `--nofile=${limits.openFiles}`,
    ...(cpuSeconds === undefined ? [] : [`--cpu=${cpuSeconds}`]),
    '--',
  ];
}

const userTasksMaxAgeMs = 5_000;

/** Threads of every process whose real user is `uid`, from /proc (what RLIMIT_NPROC counts). */
async function countUserTasks(uid: number): Promise<number> {
  let count = 0;
  for (const entry of await readdir('/proc').catch(() => [] as string[])) {
    if (!/^\d+$/.test(entry)) continue;
    const status = await readFile(`/proc/${entry}/status`, 'utf8').catch(() => '');
    if (Number(/^Uid:\s+(\d+)/m.exec(status)?.[1]) !== uid) continue;
    count += Number(/^Threads:\s+(\d+)/m.exec(status)?.[1] ?? 1);
  }
  return count;
}

/**
 * The RLIMIT_NPROC a call gets so that it may start `processes` of its own. The kernel compares
 * the limit with every task of the real user, Hearth's own threads and the person's other
 * programs included (hundreds on a desktop): the call's limit is what the user runs already plus
 * the call's share, counted at most every few seconds. Root is not limited by it at all (a
 * control group is what holds there), so it gets the plain number.
 */
export class ProcessCeiling {
  private counted: { tasks: number; at: number } | undefined;
  private counting: Promise<number> | undefined;

  constructor(private readonly uid: number | undefined = process.getuid?.()) {}

  async for(processes: number): Promise<number> {
    if (this.uid === undefined || this.uid === 0) return processes;
    const fresh = this.counted !== undefined && Date.now() - this.counted.at < userTasksMaxAgeMs;
    if (!fresh) {
      this.counting ??= countUserTasks(this.uid).then((tasks) => {
        this.counted = { tasks, at: Date.now() };
        this.counting = undefined;
        return tasks;
      });
      // A count a few seconds old still serves while the next one is made.
      if (this.counted === undefined) await this.counting;
    }
    return this.counted!.tasks + processes;
  }
}

/** One call's control groups: the files its shell writes its own id to before it becomes bubblewrap. */
export interface CallCgroup {
  joinFiles: string[];
  /**
   * Signals every process of the call at once, from the group's list: no walk of /proc, whose
   * reads of a process's memory wait while that process forks (as a fork bomb always does).
   */
  signal(signal: NodeJS.Signals): void;
  /** Ends whatever is still in the group and removes it. */
  release(): void;
}

type Controller = 'pids' | 'memory' | 'cpu';

interface Place {
  version: 1 | 2;
  /** Where each controller's call groups are made (one folder for all on v2); cpu where it can be had. */
  folders: Record<Exclude<Controller, 'cpu'>, string> & { cpu?: string };
}

/**
 * A call's share of the processor against Hearth's, about a tenth (the default weight is 100 on
 * v2, 1024 shares on v1): a call that spins every core it may still leaves Hearth answering.
 */
const cpuWeight = '10';
const cpuShares = '102';
/** The default share, for an interactive call (JailSpec.interactive). */
const interactiveCpuWeight = '100';
const interactiveCpuShares = '1024';

function isWritable(folder: string): boolean {
  try {
    accessSync(folder, constants.W_OK);
    return true;
  } catch {
    return false;
  }
}

function read(file: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return '';
  }
}

/** Lines of /proc/self/cgroup: `<id>:<controllers>:<path>`. */
function ownGroups(): Map<string, string> {
  const groups = new Map<string, string>();
  for (const line of read('/proc/self/cgroup').split('\n')) {
    const match = /^\d+:([^:]*):(.*)$/.exec(line);
    if (match) for (const controller of match[1]!.split(',')) groups.set(controller, match[2]!);
  }
  return groups;
}

function words(file: string): Set<string> {
  return new Set(read(file).split(/\s+/).filter(Boolean));
}

/**
 * cgroup v2 with a subtree delegated to Hearth (systemd's `Delegate=yes`): Hearth moves itself
 * into a leaf of its own group so the group may hand pids and memory to siblings, one per call.
 */
function delegatedV2(ownPath: string): Place | undefined {
  const root = existsSync('/sys/fs/cgroup/cgroup.controllers') ? '/sys/fs/cgroup' : '/sys/fs/cgroup/unified';
  const own = path.join(root, ownPath);
  const available = words(path.join(own, 'cgroup.controllers'));
  if (!available.has('pids') || !available.has('memory') || !isWritable(own) || !isWritable(path.join(own, 'cgroup.subtree_control'))) return undefined;
  const wanted = ['pids', 'memory', ...(available.has('cpu') ? ['cpu'] : [])];
  const enabled = words(path.join(own, 'cgroup.subtree_control'));
  if (wanted.some((controller) => !enabled.has(controller))) {
    try {
      const leaf = path.join(own, 'hearth');
      mkdirSync(leaf, { recursive: true });
      writeFileSync(path.join(leaf, 'cgroup.procs'), String(process.pid));
      writeFileSync(path.join(own, 'cgroup.subtree_control'), wanted.map((controller) => `+${controller}`).join(' '));
    } catch {
      return undefined;
    }
  }
  return { version: 2, folders: { pids: own, memory: own, ...(wanted.includes('cpu') && { cpu: own }) } };
}

/** cgroup v1 where Hearth may make groups in its own pids and memory hierarchies (root, or a delegated one). */
function writableV1(groups: Map<string, string>): Place | undefined {
  const folderOf = (controller: Controller): string | undefined => {
    const own = groups.get(controller);
    if (own === undefined) return undefined;
    const folder = path.join('/sys/fs/cgroup', controller, own);
    return isWritable(folder) && existsSync(path.join(folder, 'cgroup.procs')) ? folder : undefined;
  };
  const pids = folderOf('pids');
  const memory = folderOf('memory');
  if (pids === undefined || memory === undefined) return undefined;
  // cpu often shares a hierarchy with cpuacct (mounted as cpu,cpuacct); /sys/fs/cgroup/cpu names it either way.
  const cpu = folderOf('cpu');
  return { version: 1, folders: { pids, memory, ...(cpu !== undefined && { cpu }) } };
}

let groupCount = 0;
const groupPrefix = 'hearth-jail-';

function isRunning(processId: number): boolean {
  try {
    process.kill(processId, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function killAll(folder: string, signal: NodeJS.Signals = 'SIGKILL'): void {
  for (const id of read(path.join(folder, 'cgroup.procs')).split('\n').filter(Boolean)) {
    try {
      process.kill(Number(id), signal);
    } catch {
      // Gone already.
    }
  }
}

/** Removes a group once its last process is gone (a killed process leaves it a moment later). */
function removeWhenEmpty(folder: string, triesLeft = 20): void {
  try {
    rmdirSync(folder);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EBUSY' && triesLeft > 0) {
      killAll(folder);
      setTimeout(() => removeWhenEmpty(folder, triesLeft - 1), 50).unref();
    }
  }
}

/** A group made for calls: one folder per hierarchy it spans. */
interface Group {
  folders: string[];
  pidsFolder: string;
}

/** Free groups kept for the next calls; more are removed. */
const keptFree = 8;

function isEmpty(group: Group): boolean {
  return group.folders.every((folder) => read(path.join(folder, 'cgroup.procs')).trim() === '');
}

/**
 * Makes a control group per jailed call where the machine lets Hearth (`version` says which
 * kind). A group whose call has ended is kept and given to a later call: moving a process into a
 * group that never held one costs the kernel several milliseconds, into one that did well under one.
 */
export class CallCgroups {
  private readonly free: Group[] = [];
  private readonly busy = new Set<Group>();

  private constructor(private readonly place: Place) {}

  /** The groups Hearth may use here, or undefined (then rlimits alone apply). */
  static find(): CallCgroups | undefined {
    const groups = ownGroups();
    const v2Path = groups.get('');
    const place = (v2Path === undefined ? undefined : delegatedV2(v2Path)) ?? writableV1(groups);
    if (place === undefined) return undefined;
    const found = new CallCgroups(place);
    found.removeLeftovers();
    return found;
  }

  /** Groups a Hearth that is no longer running left behind (it crashed before removing them). */
  private removeLeftovers(): void {
    for (const parent of new Set(Object.values(this.place.folders))) {
      let names: string[] = [];
      try {
        names = readdirSync(parent).filter((name) => name.startsWith(groupPrefix));
      } catch {
        continue;
      }
      for (const name of names) {
        const owner = Number(name.slice(groupPrefix.length).split('-')[0]);
        if (!isRunning(owner)) removeWhenEmpty(path.join(parent, name));
      }
    }
  }

  /** Ends what is left in every group of this Hearth and removes them (at shutdown). */
  close(): void {
    for (const group of [...this.busy, ...this.free.splice(0)]) {
      for (const folder of group.folders) {
        killAll(folder);
        removeWhenEmpty(folder, 0);
      }
    }
    this.busy.clear();
  }

  get version(): 1 | 2 {
    return this.place.version;
  }

  /** A group for one call with its limits written (a kept one, or a new one); throws when the machine refuses it. */
  create(limits: JailLimits, interactive = false): CallCgroup {
    const group = this.free.pop() ?? this.newGroup();
    try {
      this.writeLimits(group, limits, interactive);
    } catch (error) {
      this.discard(group);
      throw error;
    }
    this.busy.add(group);
    return {
      joinFiles: group.folders.map((folder) => path.join(folder, 'cgroup.procs')),
      signal: (signal) => killAll(group.pidsFolder, signal),
      release: () => this.giveBack(group),
    };
  }

  private newGroup(): Group {
    const name = `${groupPrefix}${process.pid}-${++groupCount}`;
    const folders = [...new Set(Object.values(this.place.folders))].map((parent) => path.join(parent, name));
    const made: string[] = [];
    try {
      for (const folder of folders) {
        mkdirSync(folder);
        made.push(folder);
      }
    } catch (error) {
      for (const folder of made) removeWhenEmpty(folder, 0);
      throw error;
    }
    return { folders, pidsFolder: path.join(this.place.folders.pids, name) };
  }

  private writeLimits(group: Group, limits: JailLimits, interactive: boolean): void {
    const memory = String(limits.memoryMb * mebibyte);
    const inFolderOf = (controller: Controller, file: string) => path.join(this.place.folders[controller]!, path.basename(group.pidsFolder), file);
    const settings: Array<[Controller, string, string]> =
      this.place.version === 2
        ? [['pids', 'pids.max', String(limits.processes)], ['memory', 'memory.max', memory], ['memory', 'memory.swap.max', '0'], ['cpu', 'cpu.weight', interactive ? interactiveCpuWeight : cpuWeight]]
        : [['pids', 'pids.max', String(limits.processes)], ['memory', 'memory.limit_in_bytes', memory], ['cpu', 'cpu.shares', interactive ? interactiveCpuShares : cpuShares]];
    for (const [controller, file, value] of settings) {
      if (controller === 'cpu' && this.place.folders.cpu === undefined) continue;
      const target = inFolderOf(controller, file);
      if (file === 'memory.swap.max' && !existsSync(target)) continue;
      writeFileSync(target, value);
    }
  }

  /** Ends what the call left in its group and keeps the group for another call once it is empty. */
  private giveBack(group: Group, triesLeft = 20): void {
    for (const folder of group.folders) killAll(folder);
    if (!isEmpty(group)) {
      // A killed process leaves its group a moment later.
      if (triesLeft > 0) setTimeout(() => this.giveBack(group, triesLeft - 1), 50).unref();
      else this.discard(group);
      return;
    }
    this.busy.delete(group);
    if (this.free.length < keptFree) this.free.push(group);
    else this.discard(group);
  }

  private discard(group: Group): void {
    this.busy.delete(group);
    for (const folder of group.folders) removeWhenEmpty(folder);
  }
}
