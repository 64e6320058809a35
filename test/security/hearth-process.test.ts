// Issue 23: a process of Hearth's own user (any tool's child) read AUTH_TOKEN, OPENAI_API_KEY,
// HA_TOKEN and MQTT_PASSWORD from /proc/<hearth pid>/environ, which shows the environment a
// process was started with whatever it deletes later. Hearth now moves every variable beyond the
// harmless names out of those bytes into its heap and zeroes them (issue 38), and makes itself
// non-dumpable. The server runs here as an unprivileged user (created when the tests run as root,
// as in CI), with the secrets both in its environment and, with other values, in the .env of its
// working folder.
import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { connect } from 'node:net';
import { readdir, readFile, readlink, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { builtStartCommand, type StartCommand } from '../support/hearth-build.ts';
import { prepareProfiles, sourcesStartCommand, startChildServer, type ChildServer, type ChildServerOptions } from '../support/server-child.ts';
import { waitUntil } from '../support/wait-until.ts';
import { folderOwnedBy, giveFolderTo, unprivilegedUser, type UnprivilegedUser } from '../support/unprivileged-user.ts';

const fromEnvironment = {
  AUTH_TOKEN: 'auth-token-from-the-environment',
  OPENAI_API_KEY: 'sk-from-the-environment',
  HA_TOKEN: 'ha-token-from-the-environment',
  MQTT_PASSWORD: 'mqtt-password-from-the-environment',
  AWS_SECRET_ACCESS_KEY: 'aws-secret-from-the-environment',
};
const fromEnvFile = {
  AUTH_TOKEN: 'auth-token-from-dotenv',
  OPENAI_API_KEY: 'sk-from-dotenv',
  HA_TOKEN: 'ha-token-from-dotenv',
  MQTT_PASSWORD: 'mqtt-password-from-dotenv',
};
const secretValues = [...Object.values(fromEnvironment), ...Object.values(fromEnvFile)];
// Reading the environment of a non-dumpable process takes CAP_SYS_PTRACE; CI runs as root.
const isRoot = process.getuid?.() === 0;
const keptNames = ['PATH', 'HOME'];

let user: UnprivilegedUser;
const folders: string[] = [];

async function startAsUser(options: Pick<ChildServerOptions, 'ipc' | 'command'> = {}): Promise<ChildServer> {
  const dataDir = await folderOwnedBy(user, 'hearth-process-data-');
  const workFolder = await folderOwnedBy(user, 'hearth-process-cwd-');
  folders.push(dataDir, workFolder);
  await prepareProfiles(dataDir);
  await writeFile(path.join(workFolder, '.env'), Object.entries(fromEnvFile).map(([name, value]) => `${name}=${value}\n`).join(''), { mode: 0o600 });
  await giveFolderTo(user, dataDir);
  await giveFolderTo(user, workFolder);
  return startChildServer(dataDir, { ...fromEnvironment, LOG_LEVEL: 'info' }, { cwd: workFolder, user, ...options });
}

/**
 * `command` run with `entry` (NAME=value) added after the whole environment spawn gives it to its
 * exec environment: a name spawn also sets then appears twice, which neither spawn nor `env`
 * can do (both replace). execve through koffi, in a node that clears the close-on-exec flag
 * node sets on the standard streams, so the server's output still reaches the test.
 */
function withEntryLast(entry: string, command: StartCommand): StartCommand {
  const script = `
    const [koffiPath, entry, executable, ...args] = process.argv.slice(1);
    const library = require(koffiPath).load(null);
    const fcntl = library.func('int fcntl(int fd, int cmd, int arg)');
    const execve = library.func('int execve(const char *path, const char **argv, const char **envp)');
    for (const descriptor of [0, 1, 2]) fcntl(descriptor, 2, 0);
    const environment = Object.entries(process.env).map(([name, value]) => name + '=' + value);
    execve(executable, [executable, ...args, null], [...environment, entry, null]);
    console.error('execve failed');
    process.exit(127);`;
  return { executable: process.execPath, args: ['-e', script, '--', path.resolve('node_modules/koffi'), entry, command.executable, ...command.args] };
}

/** The names of an exec environment block, in order. */
function namesIn(block: string): string[] {
  return block.split('\0').filter((entry) => entry !== '').map((entry) => entry.slice(0, entry.indexOf('=')));
}

/** How many of a block's bytes are zeros. */
function zeroBytesIn(block: Buffer): number {
  return block.reduce((count, byte) => count + (byte === 0 ? 1 : 0), 0);
}

/** The bytes `NAME=value` and its terminating zero take in an exec environment. */
function entryBytes(entries: Record<string, string>): number {
  return Object.entries(entries).reduce((total, [name, value]) => total + Buffer.byteLength(`${name}=${value}`) + 1, 0);
}

/** Runs a command as the server's own user, as a tool's child process would. */
function runAsUser(command: string, args: string[]) {
  return spawnSync(command, args, { uid: user.uid, gid: user.gid, encoding: 'utf8' });
}

async function processUid(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  return Number(/^Uid:\s+(\d+)/m.exec(status)?.[1]);
}

beforeAll(async () => {
  user = await unprivilegedUser();
}, 60_000);
afterAll(async () => {
  await Promise.all(folders.map((folder) => rm(folder, { recursive: true, force: true })));
});

describe("Hearth's own process", () => {
  let server: ChildServer;
  beforeAll(async () => {
    server = await startAsUser();
  }, 60_000);
  afterAll(async () => {
    await server?.kill();
  });

  it('still takes its configuration from the environment, whose values win over .env', async () => {
    expect(await processUid(server.pid)).toBe(user.uid);
    const asked = (token: string) => fetch(`${server.baseUrl}/sessions`, { headers: { authorization: `Bearer ${token}` } });
    expect((await asked(fromEnvironment.AUTH_TOKEN)).status).toBe(200);
    expect((await asked(fromEnvFile.AUTH_TOKEN)).status).toBe(401);
    // It logs, and has nothing to warn about.
    expect(server.output()).toMatch(/Server listening at/);
    expect(server.output()).not.toMatch(/could not fully harden/);
  });

  it('is closed to processes of its own user: environ, cwd, fd and mem are root\'s', async () => {
    // The control: the same user reads a dumpable process of its own, so the refusals below are
    // Hearth's doing, not a reader without rights.
    const sleeper = spawn('sleep', ['30'], { uid: user.uid, gid: user.gid, env: { SLEEPER_MARK: 'readable' }, stdio: 'ignore' });
    try {
      await once(sleeper, 'spawn');
      expect(runAsUser('cat', [`/proc/${sleeper.pid}/environ`]).stdout).toContain('SLEEPER_MARK=readable');
      expect((await stat(`/proc/${sleeper.pid}/environ`)).uid).toBe(user.uid);
    } finally {
      sleeper.kill('SIGKILL');
    }

    for (const entry of ['environ', 'mem']) {
      expect((await stat(`/proc/${server.pid}/${entry}`)).uid, entry).toBe(0);
      const read = runAsUser('cat', [`/proc/${server.pid}/${entry}`]);
      expect(read.status, entry).not.toBe(0);
      expect(read.stderr, entry).toMatch(/Permission denied/);
    }
    for (const link of ['cwd', 'root', 'exe']) {
      const read = runAsUser('readlink', ['-v', `/proc/${server.pid}/${link}`]);
      expect(read.status, link).not.toBe(0);
      expect(read.stderr, link).toMatch(/Permission denied/);
    }
    const listing = runAsUser('ls', [`/proc/${server.pid}/fd`]);
    expect(listing.status).not.toBe(0);
    expect(listing.stderr).toMatch(/Permission denied/);
  });

  it.runIf(isRoot)('holds no secret in its exec environment: their bytes are zeros where execve put them, in the spawned PID', async () => {
    const block = await readFile(`/proc/${server.pid}/environ`);
    const text = block.toString('utf8');
    for (const value of secretValues) expect(text).not.toContain(value);
    expect(namesIn(text).sort()).toEqual([...keptNames].sort());
    // Zeroed in place, not cut out: the block keeps its length, and every entry the test gave
    // besides PATH and HOME is zeros now. Only the process the test spawned wrote them, so this
    // PID is the hardened server.
    const port = new URL(server.baseUrl).port;
    const given = { ...fromEnvironment, LOG_LEVEL: 'info', HOST: '127.0.0.1', PORT: port };
    const kept = namesIn(text).length;
    expect(zeroBytesIn(block) - kept).toBeGreaterThanOrEqual(entryBytes(given));
    // The descriptor that wrote them is closed again.
    const descriptors = await readdir(`/proc/${server.pid}/fd`);
    const targets = await Promise.all(descriptors.map((descriptor) => readlink(`/proc/${server.pid}/fd/${descriptor}`).catch(() => '')));
    expect(targets.filter((target) => target.endsWith('/mem'))).toEqual([]);
  });

  it('is the PID that was spawned: killing that PID ends the server', async () => {
    // A server forked off (or started again) under the spawned process would outlive its SIGKILL.
    // A connection rather than a new request after the kill: another test's server may take the port.
    const connection = connect(Number(new URL(server.baseUrl).port), '127.0.0.1');
    let closed = false;
    connection.on('error', () => {}).on('close', () => (closed = true));
    await once(connection, 'connect');
    await server.kill();
    await waitUntil(() => closed, 5_000);
  });
});

describe('started another way', () => {
  let server: ChildServer | undefined;
  afterEach(async () => {
    await server?.kill();
    server = undefined;
  });

  it('with an IPC channel (a forking parent, tsx watch) it holds no secret in its exec environment either, warns of nothing, and is non-dumpable', async () => {
    // The sources through tsx, as under `tsx watch` (`npm run dev`), the parent that holds an IPC channel.
    server = await startAsUser({ ipc: true, command: sourcesStartCommand() });
    const asked = await fetch(`${server.baseUrl}/sessions`, { headers: { authorization: `Bearer ${fromEnvironment.AUTH_TOKEN}` } });
    expect(asked.status).toBe(200);
    expect(server.output()).toMatch(/Server listening at/);
    expect(server.output()).not.toMatch(/could not fully harden/);
    expect((await stat(`/proc/${server.pid}/environ`)).uid).toBe(0);
    expect(runAsUser('cat', [`/proc/${server.pid}/environ`]).stderr).toMatch(/Permission denied/);
    if (isRoot) {
      const environ = await readFile(`/proc/${server.pid}/environ`, 'utf8');
      for (const value of secretValues) expect(environ).not.toContain(value);
      expect(namesIn(environ).sort()).toEqual([...keptNames].sort());
    }
  });

  it('with a variable given twice, it uses the first, as getenv does, and its exec environment holds neither', async () => {
    // The first is the one spawn gives (the one startChildServer sends), the second comes after it.
    const first = fromEnvironment.AUTH_TOKEN;
    const second = 'auth-token-given-second';
    // The control: a process started this way has both in its exec environment, in that order.
    const cat = withEntryLast(`AUTH_TOKEN=${second}`, { executable: '/bin/cat', args: ['/proc/self/environ'] });
    const control = spawnSync(cat.executable, cat.args, { uid: user.uid, gid: user.gid, env: { PATH: process.env.PATH, AUTH_TOKEN: first }, encoding: 'utf8' });
    expect(control.stderr).toBe('');
    const tokens = control.stdout.split('\0').filter((entry) => entry.startsWith('AUTH_TOKEN='));
    expect(tokens).toEqual([`AUTH_TOKEN=${first}`, `AUTH_TOKEN=${second}`]);

    server = await startAsUser({ command: withEntryLast(`AUTH_TOKEN=${second}`, builtStartCommand()) });
    const asked = (token: string) => fetch(`${server!.baseUrl}/sessions`, { headers: { authorization: `Bearer ${token}` } });
    expect((await asked(first)).status).toBe(200);
    expect((await asked(second)).status).toBe(401);
    expect((await asked(fromEnvFile.AUTH_TOKEN)).status).toBe(401);
    expect(server.output()).not.toMatch(/could not fully harden/);
    if (isRoot) {
      const block = await readFile(`/proc/${server.pid}/environ`);
      const environ = block.toString('utf8');
      expect(environ).not.toContain(second);
      for (const value of secretValues) expect(environ).not.toContain(value);
      expect(namesIn(environ).sort()).toEqual([...keptNames].sort());
      expect(zeroBytesIn(block)).toBeGreaterThanOrEqual(entryBytes({ AUTH_TOKEN: first }) + entryBytes({ AUTH_TOKEN: second }));
    }
  });
});
