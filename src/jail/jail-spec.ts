/**
 * How much of the machine a process started for the agent may see (docs/security.md, *The jail*).
 * - `strict`: its own user, PID, IPC, UTS, mount and network namespaces; a read-only system;
 *   the session folder as the only writable place plus a private /tmp.
 * - `host`: the host's processes, services and files as Hearth's user sees them, minus
 *   everything of Hearth's; its own PID and network namespaces all the same.
 */
export type JailKind = 'strict' | 'host';

export const jailKinds: readonly JailKind[] = ['strict', 'host'];

export interface JailSpec {
  kind: JailKind;
  /** Folders the process may write (the session's work folder). */
  writable: readonly string[];
  /** Files and folders it may read besides the system (an interpreter outside /usr, a tool's bundle). */
  readable?: readonly string[];
  /** Outbound network: strict jails have none unless granted; host jails always have it. */
  network?: boolean;
  /** Working folder inside the jail; it must be visible there. */
  cwd: string;
  /**
   * Makes the command the jail's PID 1 rather than a child of bubblewrap's init, so the PID the
   * jail reports is the command's own (the user-tool host's memory watch reads it).
   */
  commandIsInit?: boolean;
  /** A descriptor the spawner opened, where bubblewrap writes `{"child-pid": …}` once the jail exists. */
  infoFd?: number;
  /** CPU seconds each process may use, for calls that end (the wall-clock timeout's length); none for servers. */
  cpuSeconds?: number;
  /**
   * A short call a person is waiting on (converting their recording): the processor share of any
   * process rather than a tenth of it, so a busy machine does not keep them waiting; its CPU time
   * stays bounded by `cpuSeconds`.
   */
  interactive?: boolean;
}

/** A command to spawn in place of the jailed one; `release` frees what the jail holds (a network namespace). */
export interface JailedCommand {
  executable: string;
  args: string[];
  /** The caller's environment with HOME and TMPDIR pointing where the jail has them. */
  environment: NodeJS.ProcessEnv;
  /** Signals every process of the jailed call at once where it has a control group (else does nothing). */
  signal(signal: NodeJS.Signals): void;
  release(): void;
}

/** What holds each jailed call, as /health tells it (docs/security.md, *The jail*). */
export interface JailLimitsStatus {
  /** `cgroup v2` or `cgroup v1` (a group per call, plus rlimits), or `rlimits` alone. */
  mechanism: 'cgroup v2' | 'cgroup v1' | 'rlimits';
  processes: number;
  memoryMb: number;
  tmpMb: number;
  /** A tmpfs of `tmpMb` (bubblewrap 0.9+), or a folder on disk bounded by the file-size limit. */
  tmp: 'sized tmpfs' | 'on disk';
  fileSizeMb: number;
  openFiles: number;
  /** Said when the process limit does not hold (rlimits alone, running as root). */
  problem?: string;
}

/** Where the jail comes from, for `/health`, the page and the tools' refusals. */
export type JailStatus =
  | {
      state: 'on';
      bubblewrap: string;
      network: 'pasta' | 'none';
      networkProblem?: string;
      limits: JailLimitsStatus;
      /** The seccomp filter refusing TIOCSTI and TIOCLINUX: `on`, or why it is not installed. */
      terminalFilter: 'on' | string;
    }
  | { state: 'off'; reason: string }
  | {
      state: 'unavailable';
      reason: string;
      /** What is refused until the jail works (or JAIL=off is set). */
      off: string[];
      /** The one command that makes it work. */
      fix: string;
    };

/** Everything that runs only inside a jail, named as the refusals name it. */
export const jailedFeatures = ['terminal', 'code_exec', 'user tools', 'stdio MCP servers'];
