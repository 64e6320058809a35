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
}

/** A command to spawn in place of the jailed one; `release` frees what the jail holds (a network namespace). */
export interface JailedCommand {
  executable: string;
  args: string[];
  /** The caller's environment with HOME and TMPDIR pointing where the jail has them. */
  environment: NodeJS.ProcessEnv;
  release(): void;
}

/** Where the jail comes from, for `/health`, the page and the tools' refusals. */
export type JailStatus =
  | { state: 'on'; bubblewrap: string; network: 'pasta' | 'none'; networkProblem?: string }
  | { state: 'off'; reason: string }
  | { state: 'unavailable'; reason: string };
