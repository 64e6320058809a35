import { spawn } from 'node:child_process';
import type { Config } from '../config.ts';
import { bubblewrapArguments, type JailSurroundings } from './bubblewrap-arguments.ts';
import { hearthPaths, hearthProcessIds } from './hearth-footprint.ts';
import type { JailedCommand, JailSpec, JailStatus } from './jail-spec.ts';
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

function unavailableReason(result: ProbeResult): string {
  if (result.missing) return 'bubblewrap (bwrap) is not installed: install the package "bubblewrap" (apt install bubblewrap)';
  if (/uid map|user namespace|new namespace|Operation not permitted|No space left on device|Permission denied/i.test(result.output)) {
    return `bubblewrap cannot create user namespaces here (${result.output}): enable them (sysctl kernel.unprivileged_userns_clone=1, user.max_user_namespaces > 0; on Ubuntu 24.04+ also kernel.apparmor_restrict_unprivileged_userns=0 or an AppArmor profile for bwrap)`;
  }
  return `bubblewrap does not run here: ${result.output || 'it failed without a message'}`;
}

/** What the machine offers a jail, found once (bubblewrap runs, which version, whether pasta is there). */
export interface JailProbe {
  status: Exclude<JailStatus, { state: 'off' }>;
  canDisableUserNamespaces: boolean;
  pastaInstalled: boolean;
}

/** Tries bubblewrap for real (a strict jail running `true`) and looks for pasta. */
export async function probeJail(environment: NodeJS.ProcessEnv = process.env): Promise<JailProbe> {
  const version = await probe('bwrap', ['--version'], environment);
  if (!version.ok) return { status: { state: 'unavailable', reason: unavailableReason(version) }, canDisableUserNamespaces: false, pastaInstalled: false };
  const [major = 0, minor = 0] = (/(\d+)\.(\d+)/.exec(version.output) ?? []).slice(1).map(Number);
  const canDisableUserNamespaces = major > 0 || minor >= 8;
  const surroundings = { hiddenPaths: [], hiddenProcessIds: [], uid: process.getuid?.() ?? 0, gid: process.getgid?.() ?? 0, canDisableUserNamespaces };
  const run = await probe('bwrap', [...bubblewrapArguments({ kind: 'strict', writable: [], cwd: '/' }, surroundings, { ownNetwork: true }), 'true'], environment);
  if (!run.ok) return { status: { state: 'unavailable', reason: unavailableReason(run) }, canDisableUserNamespaces, pastaInstalled: false };
  const pasta = await probe('pasta', ['--version'], environment);
  const status: JailProbe['status'] = { state: 'on', bubblewrap: version.output.replace(/^bubblewrap\s*/, ''), network: pasta.missing ? 'none' : 'pasta' };
  if (pasta.missing) status.networkProblem = 'pasta is not installed (package "passt"): jails get no network at all';
  return { status, canDisableUserNamespaces, pastaInstalled: !pasta.missing };
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

  constructor(
    private readonly options: JailOptions,
    probed: JailProbe,
  ) {
    this.status_ =
      options.config.JAIL === 'off' ? { state: 'off', reason: "JAIL=off is set: the agent's processes run as Hearth's user, unjailed" } : probed.status;
    this.pastaInstalled = probed.pastaInstalled;
    this.surroundings = {
      hiddenPaths: hearthPaths(options.config),
      uid: process.getuid?.() ?? 0,
      gid: process.getgid?.() ?? 0,
      canDisableUserNamespaces: probed.canDisableUserNamespaces,
    };
  }

  static async create(options: JailOptions): Promise<Jail> {
    const probed: JailProbe =
      options.config.JAIL === 'off'
        ? { status: { state: 'unavailable', reason: 'not probed' }, canDisableUserNamespaces: false, pastaInstalled: false }
        : await probeJail(options.environment);
    return new Jail(options, probed);
  }

  get status(): JailStatus {
    return this.networkProblem !== undefined && this.status_.state === 'on' ? { ...this.status_, networkProblem: this.networkProblem } : this.status_;
  }

  /** Whether jailed processes really run in a jail (false with JAIL=off or without bubblewrap). */
  get active(): boolean {
    return this.status_.state === 'on';
  }

  /**
   * Why code_exec and user tools may not run, or undefined when they may: a jail is on, or the
   * person turned it off on purpose.
   */
  refusal(what: string): string | undefined {
    if (this.status_.state !== 'unavailable') return undefined;
    return `${what} is off: it runs only inside a jail, and ${this.status_.reason}. Set JAIL=off to run it unjailed on purpose (README: The jail).`;
  }

  /**
   * The command as it must be spawned: inside bubblewrap (entered into a network namespace
   * first when the spec has network), or unchanged when the jail is off or unavailable.
   */
  async wrap(executable: string, args: readonly string[], spec: JailSpec, environment: NodeJS.ProcessEnv): Promise<JailedCommand> {
    if (this.status_.state !== 'on') {
      return { executable, args: [...args], environment, release: () => undefined };
    }
    const wantsNetwork = spec.network === true || spec.kind === 'host';
    let namespace: NetworkNamespace | undefined;
    let release = () => undefined as void;
    if (wantsNetwork && this.pastaInstalled) {
      if (spec.kind === 'host') namespace = await this.sharedHostNetwork();
      else {
        namespace = await this.newNamespace();
        const own = namespace;
        release = () => this.closeNamespace(own);
      }
    }
    const surroundings: JailSurroundings = { ...this.surroundings, hiddenProcessIds: spec.kind === 'host' ? hearthProcessIds() : [] };
    const jailArgs = [...bubblewrapArguments(spec, surroundings, { ownNetwork: namespace === undefined }), executable, ...args];
    const prefix = namespace?.enter() ?? [];
    const [command = 'bwrap', ...rest] = [...prefix, 'bwrap', ...jailArgs];
    return { executable: command, args: rest, environment: jailEnvironment(environment, spec), release };
  }

  /** Host jails of every session share one namespace: they see the host's processes anyway. */
  private sharedHostNetwork(): Promise<NetworkNamespace | undefined> {
    this.hostNetwork ??= this.newNamespace().catch((error: Error) => {
      this.networkProblem = error.message;
      this.options.logger.warn(`jail: ${error.message}; host jails run without network`);
      this.hostNetwork = undefined;
      return undefined;
    });
    return this.hostNetwork;
  }

  private async newNamespace(): Promise<NetworkNamespace> {
    const namespace = await NetworkNamespace.create(machineryEnvironment(this.options.environment));
    this.namespaces.add(namespace);
    return namespace;
  }

  private closeNamespace(namespace: NetworkNamespace): void {
    this.namespaces.delete(namespace);
    namespace.close();
  }

  close(): void {
    for (const namespace of this.namespaces) namespace.close();
    this.namespaces.clear();
    this.hostNetwork = undefined;
  }
}

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
