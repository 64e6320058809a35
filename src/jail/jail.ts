import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Config } from '../config.ts';
import { bubblewrapArguments, type JailSurroundings, type JailTemporary } from './bubblewrap-arguments.ts';
import { hearthPaths, hearthProcessIds } from './hearth-footprint.ts';
import { CallCgroups, jailLimits, ProcessCeiling, rlimitArguments, type JailLimits } from './jail-limits.ts';
import { jailedFeatures, type JailedCommand, type JailLimitsStatus, type JailSpec, type JailStatus } from './jail-spec.ts';
import { diesWithHearth, parentIsHearth } from './dies-with-hearth.ts';
import { terminalInputFilter } from './tty-filter.ts';
import { NetworkNamespace } from './network-namespace.ts';

const probeTimeoutMs = 10_000;

export interface JailOptions {
  config: Config;
  logger: { warn(message: string): void; info(message: string): void };
  /** Where bubblewrap, pasta and nsenter are looked for: PATH only (a PATH without bwrap makes the jail unavailable). */
  environment?: NodeJS.ProcessEnv;
}

interface ProbeResult {
  ok: boolean;
  output: string;
  missing: boolean;
}

/**
 * The environment of the processes the jail machinery itself runs (the probes, the namespace holder
 * and pasta, which lives as long as its namespace): PATH and nothing else. Hearth's own environment
 * holds its secrets in memory, and these processes are Hearth's children, visible in /proc.
 */
export function machineryEnvironment(environment: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  return environment.PATH === undefined ? {} : { PATH: environment.PATH };
}

function probe(executable: string, args: string[], environment: NodeJS.ProcessEnv): Promise<ProbeResult> {
  return new Promise((resolve) => {
    const child = spawn(executable, args, { stdio: ['ignore', 'pipe', 'pipe'], env: machineryEnvironment(environment) });
    let output = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    const timer = setTimeout(() => child.kill('SIGKILL'), probeTimeoutMs);
    child.once('error', (error: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      resolve({ ok: false, output: error.message, missing: error.code === 'ENOENT' });
    });
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ ok: code === 0, output: output.trim(), missing: false });
    });
  });
}

function readNumber(file: string): number | undefined {
  try {
    return Number(readFileSync(file, 'utf8').trim());
  } catch {
    return undefined;
  }
}

/** Why bubblewrap cannot run, and the one command that makes it run. */
function unavailability(result: ProbeResult): { reason: string; fix: string } {
  if (result.missing) return { reason: 'bubblewrap (bwrap) is not installed', fix: installCommand };
  if (/uid map|user namespace|new namespace|Operation not permitted|No space left on device|Permission denied/i.test(result.output)) {
    let fix = 'sudo sysctl -w kernel.unprivileged_userns_clone=1';
    if (readNumber('/proc/sys/kernel/apparmor_restrict_unprivileged_userns') === 1) fix = 'sudo sysctl -w kernel.apparmor_restrict_unprivileged_userns=0';
    else if (readNumber('/proc/sys/user/max_user_namespaces') === 0) fix = 'sudo sysctl -w user.max_user_namespaces=15000';
    return { reason: `bubblewrap cannot create user namespaces here (${result.output})`, fix };
  }
  return { reason: `bubblewrap does not run here: ${result.output || 'it failed without a message'}`, fix: installCommand };
}

const installCommand = 'sudo apt install bubblewrap passt';
/** The descriptor bubblewrap reads the seccomp filter from, opened by the jail's shell just before it. */
const filterDescriptor = 9;

/** What the machine offers a jail, found once (bubblewrap runs, which version, whether pasta is there). */
export interface JailProbe {
  status: { state: 'on'; bubblewrap: string; network: 'pasta' | 'none'; networkProblem?: string } | Extract<JailStatus, { state: 'unavailable' }>;
  canDisableUserNamespaces: boolean;
  pastaInstalled: boolean;
  /** bubblewrap 0.9+ sizes a tmpfs (`--size`). */
  canSizeTmpfs?: boolean;
  /** `on` when bubblewrap ran with the terminal-input filter, else why not. */
  terminalFilter?: 'on' | string;
}

function unavailable(found: { reason: string; fix: string }): JailProbe {
  return { status: { state: 'unavailable', ...found, off: [...jailedFeatures] }, canDisableUserNamespaces: false, pastaInstalled: false };
}

/**
 * Tries bubblewrap for real (a strict jail running `true`, with the terminal-input filter when
 * `filterFile` holds one) and looks for prlimit and pasta.
 */
export async function probeJail(environment: NodeJS.ProcessEnv = process.env, filterFile?: string): Promise<JailProbe> {
  // The four version and helper probes run side by side, then the jail's own run: one after
  // another they were most of Hearth's wait before it listened (issue 38). What is reported is
  // what a probe in sequence would report, the first failure in the same order.
  const [version, limits, deathSignal, pasta] = await Promise.all([
    probe('bwrap', ['--version'], environment),
    probe('prlimit', ['--version'], environment),
    probe('setpriv', ['--pdeathsig', 'KILL', '--', 'true'], environment),
    probe('pasta', ['--version'], environment),
  ]);
  if (!version.ok) return unavailable(unavailability(version));
  const [major = 0, minor = 0] = (/(\d+)\.(\d+)/.exec(version.output) ?? []).slice(1).map(Number);
  const canDisableUserNamespaces = major > 0 || minor >= 8;
  const canSizeTmpfs = major > 0 || minor >= 9;
  if (!limits.ok) return unavailable({ reason: 'prlimit (util-linux), which sets the limits of each jailed call, does not run here', fix: 'sudo apt install util-linux' });
  if (!deathSignal.ok) return unavailable({ reason: 'setpriv (util-linux), which ends each jail when Hearth dies, does not run here', fix: 'sudo apt install util-linux' });
  const surroundings = { hiddenPaths: [], hiddenProcessIds: [], uid: process.getuid?.() ?? 0, gid: process.getgid?.() ?? 0, canDisableUserNamespaces };
  const runTrue = (withFilter: boolean) => {
    const args = [...bubblewrapArguments({ kind: 'strict', writable: [], cwd: '/' }, surroundings, { ownNetwork: true, ...(withFilter && { seccompFd: filterDescriptor }) }), 'true'];
    return withFilter ? probe('/bin/sh', ['-c', `exec "$@" ${filterDescriptor}<"$0"`, filterFile!, 'bwrap', ...args], environment) : probe('bwrap', args, environment);
  };
  let terminalFilter: string = filterFile === undefined ? `not installed: no seccomp filter is known for this architecture (${process.arch})` : 'on';
  let run = await runTrue(filterFile !== undefined);
  if (!run.ok && filterFile !== undefined) {
    const withoutFilter = await runTrue(false);
    if (withoutFilter.ok) terminalFilter = `not installed: bubblewrap refused the seccomp filter (${run.output})`;
    run = withoutFilter;
  }
  if (!run.ok) return unavailable(unavailability(run));
  const status: JailProbe['status'] = { state: 'on', bubblewrap: version.output.replace(/^bubblewrap\s*/, ''), network: pasta.missing ? 'none' : 'pasta' };
  if (pasta.missing) status.networkProblem = 'pasta is not installed (package "passt"): jails get no network at all';
  return { status, canDisableUserNamespaces, pastaInstalled: !pasta.missing, canSizeTmpfs, terminalFilter };
}

/** The file bubblewrap reads the terminal-input filter from, written into `folder`; undefined where no filter is known. */
export function writeTerminalInputFilter(folder: string): string | undefined {
  const filter = terminalInputFilter();
  if (filter === undefined) return undefined;
  const file = path.resolve(folder, 'terminal-input.bpf');
  mkdirSync(folder, { recursive: true, mode: 0o700 });
  writeFileSync(file, filter, { mode: 0o600 });
  return file;
}

/** What a jail uses of the machine besides bubblewrap: the filter file the probe ran with, and control groups where Hearth may make them. */
export function jailMachine(probed: JailProbe, filterFile: string | undefined): { filterFile?: string; cgroups?: CallCgroups } {
  const cgroups = probed.status.state === 'on' ? CallCgroups.find() : undefined;
  return { ...(filterFile !== undefined && { filterFile }), ...(cgroups !== undefined && { cgroups }) };
}

/**
 * Builds the jails every process Hearth starts for the agent runs in (docs/security.md, *The jail*): a strict
 * one for code, user tools and MCP servers, a host one for a server admin's terminal. The
 * machine is probed once (`probeJail`); `status` says what holds, and `wrap` turns a command
 * into its jailed form.
 */
export class Jail {
  private hostNetwork: Promise<NetworkNamespace | undefined> | undefined;
  private readonly namespaces = new Set<NetworkNamespace>();
  private networkProblem: string | undefined;
  private readonly status_: JailStatus;
  private readonly surroundings: Omit<JailSurroundings, 'hiddenProcessIds'>;
  private readonly pastaInstalled: boolean;
  private readonly limits: JailLimits;
  private readonly canSizeTmpfs: boolean;
  private readonly processCeiling = new ProcessCeiling();
  /** The seccomp filter's file, when bubblewrap ran with it in the probe. */
  private readonly filterFile: string | undefined;
  private readonly cgroups: CallCgroups | undefined;

  constructor(
    private readonly options: JailOptions,
    probed: JailProbe,
    machine: { filterFile?: string; cgroups?: CallCgroups } = {},
  ) {
    this.limits = jailLimits(options.config);
    this.canSizeTmpfs = probed.canSizeTmpfs === true;
    this.filterFile = probed.terminalFilter === 'on' ? machine.filterFile : undefined;
    this.cgroups = machine.cgroups;
    this.status_ =
      options.config.JAIL === 'off'
        ? { state: 'off', reason: "JAIL=off is set: the agent's processes run as Hearth's user, unjailed" }
        : probed.status.state === 'on'
          ? { ...probed.status, limits: this.limitsStatus(), terminalFilter: probed.terminalFilter ?? 'not installed: not probed' }
          : probed.status;
    this.pastaInstalled = probed.pastaInstalled;
    this.surroundings = {
      hiddenPaths: hearthPaths(options.config),
      uid: process.getuid?.() ?? 0,
      gid: process.getgid?.() ?? 0,
      canDisableUserNamespaces: probed.canDisableUserNamespaces,
    };
  }

  static async create(options: JailOptions): Promise<Jail> {
    if (options.config.JAIL === 'off') {
      return new Jail(options, { status: { state: 'unavailable', reason: 'not probed', off: [], fix: '' }, canDisableUserNamespaces: false, pastaInstalled: false });
    }
    // What the calls of a Hearth that crashed left in their /tmp folders goes at the next start.
    rmSync(path.resolve(options.config.DATA_DIR, 'jail', 'tmp'), { recursive: true, force: true });
    const filterFile = writeTerminalInputFilter(path.resolve(options.config.DATA_DIR, 'jail'));
    const probed = await probeJail(options.environment, filterFile);
    return new Jail(options, probed, jailMachine(probed, filterFile));
  }

  private limitsStatus(): JailLimitsStatus {
    const cgroups = this.cgroups;
    const status: JailLimitsStatus = {
      mechanism: cgroups === undefined ? 'rlimits' : cgroups.version === 2 ? 'cgroup v2' : 'cgroup v1',
      processes: this.limits.processes,
      memoryMb: this.limits.memoryMb,
      tmpMb: this.limits.tmpMb,
      tmp: this.canSizeTmpfs ? 'sized tmpfs' : 'on disk',
      fileSizeMb: this.limits.fileSizeMb,
      openFiles: this.limits.openFiles,
    };
    if (cgroups === undefined && process.getuid?.() === 0) {
      status.problem = 'Hearth runs as root without a control group of its own: the kernel does not apply the process limit to root, so a fork bomb is bounded only by the machine (run Hearth as its own user, or under systemd with Delegate=yes)';
    }
    return status;
  }

  get status(): JailStatus {
    return this.networkProblem !== undefined && this.status_.state === 'on' ? { ...this.status_, networkProblem: this.networkProblem } : this.status_;
  }

  /** Whether jailed processes really run in a jail (false with JAIL=off or without bubblewrap). */
  get active(): boolean {
    return this.status_.state === 'on';
  }

  /**
   * Why the terminal, code_exec, user tools or a stdio MCP server may not run, or undefined when
   * they may: a jail is on, or the person turned it off on purpose.
   */
  refusal(what: string): string | undefined {
    if (this.status_.state !== 'unavailable') return undefined;
    return `${what} is off: it runs only inside a jail, and ${this.status_.reason}. Fix: ${this.status_.fix}. Or set JAIL=off to run it unjailed on purpose (docs/operations.md, "The jail: bubblewrap and passt").`;
  }

  /**
   * The command as it must be spawned: inside bubblewrap under the call's limits (entered into a
   * network namespace first when the spec has network), or unchanged when the person set JAIL=off.
   * Without a working jail it throws: nothing runs unjailed by accident.
   *
   * The spawned command is `setpriv` (the death signal) running `prlimit` (the rlimits) running
   * `/bin/sh`, which checks that Hearth still lives, joins the call's control groups, opens the
   * seccomp filter on descriptor 9 and becomes bubblewrap. Every
   * spawner gets the same command line, with no descriptor of its own to pass: the MCP SDK's
   * stdio transport spawns with exactly three.
   */
  async wrap(executable: string, args: readonly string[], spec: JailSpec, environment: NodeJS.ProcessEnv): Promise<JailedCommand> {
    if (this.status_.state === 'off') return { executable, args: [...args], environment, signal: () => undefined, release: () => undefined };
    if (this.status_.state === 'unavailable') throw new Error(this.refusal(executable));
    const releases: Array<() => void> = [];
    const release = () => {
      for (const step of releases.splice(0)) step();
    };
    try {
      const wantsNetwork = spec.network === true || spec.kind === 'host';
      let namespace: NetworkNamespace | undefined;
      if (wantsNetwork && this.pastaInstalled) {
        if (spec.kind === 'host') {
          namespace = await this.sharedHostNetwork();
          // Made earlier: an address the machine gained since is closed before this process enters.
          await namespace?.closeNewHostAddresses();
        } else {
          const own = await this.newNamespace();
          namespace = own;
          releases.push(() => this.closeNamespace(own));
        }
      }
      const cgroup = this.cgroups?.create(this.limits, spec.interactive === true);
      if (cgroup) releases.push(cgroup.release);
      // A host jail sees the host's /tmp; a strict one gets its own, bounded.
      const temporary = spec.kind === 'host' ? undefined : this.temporary(releases);
      const surroundings: JailSurroundings = { ...this.surroundings, hiddenProcessIds: spec.kind === 'host' ? hearthProcessIds() : [] };
      const { filterFile } = this;
      const jailArgs = bubblewrapArguments(spec, surroundings, {
        ownNetwork: namespace === undefined,
        temporary,
        ...(filterFile !== undefined && { seccompFd: filterDescriptor }),
      });
      const jailed = [...(namespace?.enter() ?? []), 'bwrap', ...jailArgs, executable, ...args];
      const shell = ['/bin/sh', '-c', joinAndBecome, filterFile ?? '', String(process.pid), ...(cgroup?.joinFiles ?? []), '--', ...jailed];
      const processes = await this.processCeiling.for(this.limits.processes);
      const [command = 'setpriv', ...commandArgs] = [...diesWithHearth, ...rlimitArguments({ ...this.limits, processes }, spec.cpuSeconds), ...shell];
      return { executable: command, args: commandArgs, environment: jailEnvironment(environment, spec), signal: (signal) => cgroup?.signal(signal), release };
    } catch (error) {
      release();
      throw error;
    }
  }

  /** The call's /tmp: a sized tmpfs where bubblewrap can make one, else a folder of its own under DATA_DIR, removed after. */
  private temporary(releases: Array<() => void>): JailTemporary {
    if (this.canSizeTmpfs) return { sizeBytes: this.limits.tmpMb * 1024 * 1024 };
    // Absolute: bubblewrap and the jail's shell run in the call's working folder.
    const root = path.resolve(this.options.config.DATA_DIR, 'jail', 'tmp');
    mkdirSync(root, { recursive: true, mode: 0o700 });
    const folder = mkdtempSync(path.join(root, 'call-'));
    releases.push(() => rmSync(folder, { recursive: true, force: true }));
    return { folder };
  }

  /** Host jails of every session share one namespace: they see the host's processes anyway. */
  private async sharedHostNetwork(): Promise<NetworkNamespace | undefined> {
    // One that cut itself off is replaced.
    const current = this.hostNetwork;
    if ((await current)?.cutReason !== undefined && this.hostNetwork === current) this.hostNetwork = undefined;
    this.hostNetwork ??= this.newNamespace().catch((error: Error) => {
      this.networkProblem = error.message;
      this.options.logger.warn(`jail: ${error.message}; host jails run without network`);
      this.hostNetwork = undefined;
      return undefined;
    });
    return this.hostNetwork;
  }

  private async newNamespace(): Promise<NetworkNamespace> {
    const { logger } = this.options;
    const namespace: NetworkNamespace = await NetworkNamespace.create(machineryEnvironment(this.options.environment), {
      closed: (addresses) => logger.info(`jail: this machine gained ${addresses.join(', ')}; closed to a jail's network namespace`),
      cut: (reason) => {
        logger.warn(`jail: a network namespace cut itself off (its jails keep only their loopback): ${reason}`);
        this.namespaces.delete(namespace);
      },
    });
    this.namespaces.add(namespace);
    return namespace;
  }

  private closeNamespace(namespace: NetworkNamespace): void {
    this.namespaces.delete(namespace);
    namespace.close();
  }

  close(): void {
    this.cgroups?.close();
    for (const namespace of this.namespaces) namespace.close();
    this.namespaces.clear();
    this.hostNetwork = undefined;
  }
}

/**
 * The jail's shell: `$0` is the filter file (or empty), `$1` Hearth's process id, then the control
 * groups' `cgroup.procs` files up to `--`, then bubblewrap's command line. It ends at once if Hearth
 * is gone already (the parent-death signal came too late to fire), writes its own id into each
 * group (so bubblewrap and all it starts are counted there from the first instruction) and
 * becomes bubblewrap with the filter open on descriptor 9.
 */
const joinAndBecome = [
  'filter=$0',
  `${parentIsHearth('$1')} || { echo "bwrap: Hearth ended before the jail started" >&2; exit 125; }`,
  'shift',
  'while [ "$1" != -- ]; do echo $$ > "$1" || { echo "bwrap: could not join the control group $1" >&2; exit 125; }; shift; done',
  'shift',
  `if [ -n "$filter" ]; then exec "$@" ${filterDescriptor}<"$filter"; fi`,
  'exec "$@"',
].join('\n');

function isInsideAny(folders: readonly string[], candidate: string): boolean {
  return folders.some((folder) => candidate === folder || candidate.startsWith(`${folder}/`));
}

/**
 * A temporary folder the caller chose inside a writable folder stays; otherwise the jail's
 * private /tmp. A strict jail's home is its work folder.
 */
function jailEnvironment(environment: NodeJS.ProcessEnv, spec: JailSpec): NodeJS.ProcessEnv {
  const temporary = environment.TMPDIR !== undefined && isInsideAny(spec.writable, environment.TMPDIR) ? environment.TMPDIR : '/tmp';
  return { ...environment, TMPDIR: temporary, ...(spec.kind === 'strict' && { HOME: spec.writable[0] ?? '/tmp' }) };
}

/**
 * Why bubblewrap could not start the jailed command, read from its stderr: inside a jail the
 * spawn succeeds (bubblewrap runs) and a missing command surfaces there instead of as ENOENT.
 */
export function jailedStartFailure(stderr: string): 'ENOENT' | 'EACCES' | undefined {
  const line = /^bwrap: execvp [^\n]*/m.exec(stderr)?.[0];
  if (line === undefined) return undefined;
  if (line.includes('No such file or directory')) return 'ENOENT';
  if (line.includes('Permission denied')) return 'EACCES';
  return undefined;
}
