import { lstatSync, readdirSync, readlinkSync, statSync } from 'node:fs';
import path from 'node:path';
import type { JailSpec } from './jail-spec.ts';

/** What the arguments depend on besides the spec: read from the machine once, or per jail for process ids. */
export interface JailSurroundings {
  /** Hearth's files and folders (hearth-footprint.ts), hidden wherever they would be visible. */
  hiddenPaths: readonly string[];
  /** `/proc/<id>` entries a host jail must not open (Hearth and the processes above it). */
  hiddenProcessIds: readonly number[];
  uid: number;
  gid: number;
  /** bubblewrap 0.8+ can stop the jail from making user namespaces of its own. */
  canDisableUserNamespaces: boolean;
}

/** The system a strict jail reads: merged-/usr links stay links, real folders are bound read-only. */
const systemRoots = ['/usr', '/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32', '/etc'];

/** Secrets under /etc that a jail running as root (uid 0 owns them) could otherwise read. */
function etcSecrets(): string[] {
  const fixed = ['/etc/shadow', '/etc/shadow-', '/etc/gshadow', '/etc/gshadow-', '/etc/sudoers', '/etc/sudoers.d', '/etc/ssl/private', '/etc/security/opasswd'];
  let hostKeys: string[] = [];
  try {
    hostKeys = readdirSync('/etc/ssh').filter((name) => /^ssh_host_.*_key$/.test(name)).map((name) => path.join('/etc/ssh', name));
  } catch {
    // No SSH server configuration on this machine.
  }
  return [...fixed, ...hostKeys];
}

function kindOf(entry: string): 'folder' | 'file' | 'link' | undefined {
  try {
    const found = lstatSync(entry);
    if (found.isSymbolicLink()) return 'link';
    return found.isDirectory() ? 'folder' : 'file';
  } catch {
    return undefined;
  }
}

function isInside(root: string, candidate: string): boolean {
  const relative = path.relative(root, candidate);
  return relative === '' || (!relative.startsWith('..') && !path.isAbsolute(relative));
}

/** Covers a file or folder with nothing: an empty tmpfs for a folder, /dev/null for anything else. */
function hide(entry: string): string[] {
  let folder = false;
  try {
    folder = statSync(entry).isDirectory();
  } catch {
    return [];
  }
  return folder ? ['--tmpfs', entry] : ['--ro-bind', '/dev/null', entry];
}

function namespaces(spec: JailSpec, surroundings: JailSurroundings, ownNetwork: boolean): string[] {
  return [
    '--unshare-user',
    '--unshare-pid',
    '--unshare-ipc',
    '--unshare-uts',
    '--unshare-cgroup-try',
    ...(ownNetwork ? ['--unshare-net'] : []),
    '--uid', String(surroundings.uid),
    '--gid', String(surroundings.gid),
    ...(surroundings.canDisableUserNamespaces ? ['--disable-userns'] : []),
    '--cap-drop', 'ALL',
    // Its own session: no controlling terminal, so nothing inside can type into the one Hearth was started from.
    '--new-session',
    '--die-with-parent',
    '--hostname', 'jail',
    ...(spec.commandIsInit ? ['--as-pid-1'] : []),
    ...(spec.infoFd === undefined ? [] : ['--info-fd', String(spec.infoFd)]),
  ];
}

interface SystemView {
  /** The system roots bound read-only (or recreated as links) with /etc's secrets covered. */
  args: string[];
  /** The roots that are real folders, where Hearth's own paths are looked for. */
  folders: string[];
}

let systemView: SystemView | undefined;

/** The machine's system folders change only with the machine: read once, not for every jailed process. */
function readSystemView(): SystemView {
  if (systemView) return systemView;
  const args: string[] = [];
  const folders: string[] = [];
  for (const root of systemRoots) {
    const kind = kindOf(root);
    if (kind === 'link') args.push('--symlink', readlinkSync(root), root);
    else if (kind === 'folder') {
      args.push('--ro-bind', root, root);
      folders.push(root);
    }
  }
  for (const secret of etcSecrets()) args.push(...hide(secret));
  systemView = { args, folders };
  return systemView;
}

/**
 * The jail's /tmp: a folder on disk bound there (bounded by the file-size limit), a tmpfs of a set
 * size (bubblewrap 0.9+), or without either (the probe) a plain tmpfs.
 */
export type JailTemporary = { folder: string } | { sizeBytes: number } | undefined;

function temporaryArguments(temporary: JailTemporary): string[] {
  if (temporary === undefined) return ['--tmpfs', '/tmp'];
  if ('folder' in temporary) return ['--bind', temporary.folder, '/tmp'];
  return ['--size', String(temporary.sizeBytes), '--tmpfs', '/tmp'];
}

function strictFileSystem(surroundings: JailSurroundings, temporary: JailTemporary): string[] {
  const system = readSystemView();
  const args = [...system.args, '--proc', '/proc', '--dev', '/dev', ...temporaryArguments(temporary)];
  // Hearth installed under a system folder (/usr/lib/hearth, /etc/hearth) is hidden there too.
  for (const entry of surroundings.hiddenPaths) {
    if (system.folders.some((root) => isInside(root, entry))) args.push(...hide(entry));
  }
  return args;
}

function hostFileSystem(surroundings: JailSurroundings): string[] {
  // Device nodes bound from the host cannot be opened inside a user namespace: /dev is bubblewrap's own (null, zero, random, tty…).
  // /tmp is the host's, as server_admin's commands expect (a file written there is on the host); Hearth's own files there are hidden below.
  const args = ['--bind', '/', '/', '--ro-bind', '/proc', '/proc', '--dev', '/dev'];
  for (const entry of surroundings.hiddenPaths) args.push(...hide(entry));
  // The person's desktop session bus, keyring and agents live here.
  args.push(...hide(`/run/user/${surroundings.uid}`));
  for (const id of surroundings.hiddenProcessIds) args.push(...hide(`/proc/${id}`));
  return args;
}

/**
 * bubblewrap's arguments for one jail, up to and including `--`: namespaces, the file system
 * view (system or host, Hearth's paths hidden), then what the spec grants on top, so a session
 * folder inside a hidden data folder shows again, and only it.
 */
export function bubblewrapArguments(
  spec: JailSpec,
  surroundings: JailSurroundings,
  options: { ownNetwork: boolean; temporary?: JailTemporary; seccompFd?: number },
): string[] {
  const fileSystem = spec.kind === 'strict' ? strictFileSystem(surroundings, options.temporary) : hostFileSystem(surroundings);
  const filter = options.seccompFd === undefined ? [] : ['--seccomp', String(options.seccompFd)];
  const granted: string[] = [];
  for (const entry of spec.readable ?? []) granted.push('--ro-bind-try', entry, entry);
  // A grant that holds Hearth's places (FS_ALLOWED_PATHS=/home/ann, Hearth in /home/ann/hearth)
  // shows them again: hidden once more on top of it, before the work folder is bound back.
  for (const entry of surroundings.hiddenPaths) {
    if ((spec.readable ?? []).some((grant) => isInside(grant, entry))) granted.push(...hide(entry));
  }
  for (const entry of spec.writable) granted.push('--bind', entry, entry);
  return [...namespaces(spec, surroundings, options.ownNetwork), ...filter, ...fileSystem, ...granted, '--chdir', spec.cwd, '--'];
}
