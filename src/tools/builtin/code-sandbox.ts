import { readFileSync } from 'node:fs';
import { realpath } from 'node:fs/promises';
import path from 'node:path';
import { runProcess } from '../process-runner.ts';
import { isInside, realpathAllowingMissing, type AllowedRoots } from '../host-files/path-access.ts';
import { packagePath } from '../../package-root.ts';

/** What one code_exec program may touch. */
export interface SandboxPolicy {
  /** Folders it may read besides the work folder, or anywhere (FS_ALLOWED_PATHS=*). */
  readRoots: AllowedRoots;
  /** The session's work folder: the only place it writes. */
  workFolder: string;
}

/**
 * Node's permission model (`--experimental-permission` before Node 22.13, `--permission`
 * after): reads limited to the list, writes to the work folder, and no child processes,
 * worker threads, native addons, WASI or inspector, none of which is granted. Each path is
 * its own flag (Node dropped comma-separated lists); the work folder comes last, so a Node
 * that only kept the last flag would still fail closed.
 */
export async function nodePermissionArguments(policy: SandboxPolicy, version = process.versions.node): Promise<string[]> {
  const [major = 0, minor = 0] = version.split('.').map(Number);
  const stable = major >= 23 || (major === 22 && minor >= 13);
  const workFolders = await bothSpellings(policy.workFolder);
  const roots = policy.readRoots === 'anywhere' ? ['*'] : (await Promise.all(policy.readRoots.map(bothSpellings))).flat();
  const readList = [...new Set([...roots, ...workFolders])];
  return [
    stable ? '--permission' : '--experimental-permission',
    '--disable-warning=ExperimentalWarning',
    ...readList.map((entry) => `--allow-fs-read=${entry}`),
    ...workFolders.map((entry) => `--allow-fs-write=${entry}`),
    '--import',
    signalGuardModule,
  ];
}

/** The path as given and as the file system resolves it (a session folder under a linked /tmp has two). */
async function bothSpellings(folder: string): Promise<string[]> {
  const resolved = path.resolve(folder);
  const real = await realpath(resolved).catch(() => resolved);
  return real === resolved ? [resolved] : [resolved, real];
}

/**
 * Loaded before the program: the permission model does not cover signals, so without this a
 * program could kill the server (its parent). Only the program's own process and group may be signalled.
 */
const signalGuardSource = [
  'const ownPid = process.pid, rawKill = process._kill.bind(process);',
  "Object.defineProperty(process, '_kill', { writable: false, configurable: false, value: (pid, signal) => {",
  "if (pid !== ownPid && pid !== 0 && pid !== -ownPid) throw Object.assign(new Error('code_exec: a program may signal only its own process.'), { code: 'ERR_ACCESS_DENIED' });",
  'return rawKill(pid, signal); } });',
].join(' ');
const signalGuardModule = `data:text/javascript,${signalGuardSource.replaceAll('%', '%25').replaceAll('#', '%23')}`;

/**
 * Symbolic links in the work folder that lead outside it. Node's permission model checks the
 * path a program names, then follows links (documented), so such a link would let a program
 * read or write where it points. Links inside the folder are fine. `find` lists them quickly;
 * resolving them is done here, through the same rules as the filesystem tool.
 */
export async function linksLeavingFolder(workFolder: string, signal?: AbortSignal): Promise<{ link: string; target: string }[]> {
  const folder = await realpath(workFolder);
  const listing = await runProcess({
    executable: 'find',
    args: [folder, '-type', 'l', '-print0'],
    cwd: folder,
    timeoutMs: 30_000,
    ...(signal && { signal }),
    maxOutputCharacters: 4_000_000,
  });
  if (listing.spawnError || listing.timedOut || listing.stdout.includes('characters omitted] …')) {
    throw new Error(`could not list the symbolic links in ${folder}${listing.spawnError ? `: ${listing.spawnError.message}` : ''}`);
  }
  const leaving: { link: string; target: string }[] = [];
  for (const link of listing.stdout.split('\0').filter((entry) => entry !== '')) {
    // A name that is not UTF-8 cannot be resolved from its decoded text: count it as leaving.
    if (link.includes('\uFFFD')) {
      leaving.push({ link: path.relative(folder, link), target: '(a name that is not UTF-8)' });
      continue;
    }
    const target = await realpathAllowingMissing(link).catch(() => '(a loop of links)');
    if (!isInside(folder, target)) leaving.push({ link: path.relative(folder, link), target });
  }
  return leaving;
}

let guardSource: string | undefined;

/** The Python guard's source (src/tools/builtin/code-exec-guard.py), read once. */
export function pythonGuardSource(): string {
  guardSource ??= readFileSync(packagePath('src', 'tools', 'builtin', 'code-exec-guard.py'), 'utf8');
  return guardSource;
}

/** Files the interpreter itself reads in ordinary use (time zones, MIME types, CA certificates, OS release). */
const interpreterReads = [
  '/dev/null', '/dev/urandom', '/etc/localtime', '/usr/share/zoneinfo', '/etc/mime.types', '/etc/os-release', '/usr/lib/os-release',
  '/etc/ssl/certs', '/usr/share/ca-certificates', '/etc/pki/tls/certs', '/usr/share/locale',
];

/** Modules that run native code or other interpreters the audit hook cannot see into, or open files from C. */
const blockedPythonModules = [
  'ctypes', '_ctypes', 'cffi', '_cffi_backend', '_xxsubinterpreters', '_interpreters', '_xxinterpchannels', '_interpchannels',
  '_interpqueues', '_testcapi', '_testinternalcapi', '_testmultiphase', '_testsinglephase',
  '_testimportmultiple', '_testclinic', '_sqlite3', 'sqlite3', '_dbm', '_gdbm', 'readline',
];

/** `python3 -I -B -u -c <guard> <policy> <program>`: isolated mode, no bytecode written, unbuffered output. */
export async function pythonGuardArguments(policy: SandboxPolicy, programFile: string): Promise<string[]> {
  const folders = await bothSpellings(policy.workFolder);
  const description = {
    read: policy.readRoots === 'anywhere' ? null : policy.readRoots,
    write: [...folders, '/dev/null'],
    interpreter_reads: interpreterReads,
    blocked_modules: blockedPythonModules,
  };
  return ['-I', '-B', '-u', '-c', pythonGuardSource(), JSON.stringify(description), programFile];
}
