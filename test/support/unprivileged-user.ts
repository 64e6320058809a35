// A user without privileges for tests that must show what a process of Hearth's own user can
// and cannot reach. CI runs as root, where everything is readable anyway; real installations
// run Hearth as an ordinary user.
//
//   const user = await unprivilegedUser();
//   const dataDir = await folderOwnedBy(user, 'hearth-x-');   // or giveFolderTo(user, folder) after filling it
//   spawn(command, args, { uid: user.uid, gid: user.gid, env: { HOME: user.home, ... } });
//
// Under root the user is `hearth-test` (or the name a test asks for), created once (useradd --system --create-home) and
// reused by every later run; otherwise it is the current user, already unprivileged. Either
// way the project checkout and node_modules are checked readable by it, so a test fails here
// with the reason rather than later with a server that never starts.
import { execFile, spawnSync } from 'node:child_process';
import { chown, mkdtemp } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

export interface UnprivilegedUser {
  uid: number;
  gid: number;
  name: string;
  home: string;
}

const testUserName = 'hearth-test';
const run = promisify(execFile);
const known = new Map<string, Promise<UnprivilegedUser>>();

/**
 * `name` gives a test a user of its own (under root): one whose checks count every process of
 * their user, as RLIMIT_NPROC does, while other files run servers as `hearth-test` meanwhile.
 */
export function unprivilegedUser(name = testUserName): Promise<UnprivilegedUser> {
  let user = known.get(name);
  if (user === undefined) {
    user = findOrCreate(name).then((found) => {
      checkProjectReadable(found);
      return found;
    });
    known.set(name, user);
  }
  return user;
}

/** A new folder in the temp folder that the user owns (a DATA_DIR, a working folder). */
export async function folderOwnedBy(user: UnprivilegedUser, prefix: string): Promise<string> {
  const folder = await mkdtemp(path.join(os.tmpdir(), prefix));
  if (process.getuid?.() === 0) await chown(folder, user.uid, user.gid);
  return folder;
}

/** Makes a folder and everything in it the user's (files written by the test as root are not). */
export async function giveFolderTo(user: UnprivilegedUser, folder: string): Promise<void> {
  if (process.getuid?.() === 0) await run('chown', ['-R', `${user.uid}:${user.gid}`, folder]);
}

async function findOrCreate(name: string): Promise<UnprivilegedUser> {
  if (process.getuid?.() !== 0) {
    const current = os.userInfo();
    return { uid: current.uid, gid: current.gid, name: current.username, home: current.homedir };
  }
  const existing = await lookUp(name);
  if (existing) return existing;
  try {
    await run('useradd', ['--system', '--create-home', '--user-group', '--shell', '/usr/sbin/nologin', name]);
  } catch (error) {
    // Another test file in a parallel worker may have created it meanwhile (exit 9: exists).
    const created = await lookUp(name);
    if (created) return created;
    throw new Error(`cannot create the test user ${name} with useradd: ${(error as Error).message}`);
  }
  const created = await lookUp(name);
  if (!created) throw new Error(`useradd created ${name}, but getent does not find it`);
  return created;
}

async function lookUp(name: string): Promise<UnprivilegedUser | undefined> {
  let line: string;
  try {
    line = (await run('getent', ['passwd', name])).stdout.trim();
  } catch {
    return undefined; // getent exits 2 for an unknown name
  }
  const [, , uid, gid, , home] = line.split(':');
  return { uid: Number(uid), gid: Number(gid), name, home: home ?? '/' };
}

function checkProjectReadable(user: UnprivilegedUser): void {
  const files = ['package.json', 'src/main.ts', 'node_modules/tsx/package.json', 'node_modules/koffi/package.json'].map((file) => path.resolve(file));
  const check = spawnSync(process.execPath, ['-e', 'for (const file of process.argv.slice(1)) require("fs").readFileSync(file)', ...files], {
    uid: user.uid,
    gid: user.gid,
    encoding: 'utf8',
  });
  if (check.status !== 0) {
    throw new Error(`the user ${user.name} (uid ${user.uid}) cannot read the project at ${path.resolve('.')}; every folder above it and node_modules must be readable by others: ${check.stderr || check.error?.message}`);
  }
}
