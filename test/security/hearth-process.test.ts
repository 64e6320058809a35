// Issue 23: a process of Hearth's own user (any tool's child) read AUTH_TOKEN, OPENAI_API_KEY,
// HA_TOKEN and MQTT_PASSWORD from /proc/<hearth pid>/environ, which shows the environment a
// process was started with whatever it deletes later. Hearth now starts itself again in place
// with only harmless variables in its exec environment, and makes itself non-dumpable. The server
// runs here as an unprivileged user (created when the tests run as root, as in CI), with the
// secrets both in its environment and, with other values, in the .env of its working folder.
import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { connect } from 'node:net';
import { readdir, readFile, readlink, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { builtStartCommand } from '../support/hearth-build.ts';
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
const keptNames = ['PATH', 'HOME', 'HEARTH_ENVIRONMENT_FD'];

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
    // Its standard streams survived the restart: it still logs, and has nothing to warn about.
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

  it.runIf(isRoot)('holds no secret in its exec environment, and the spawned PID is the restarted server', async () => {
    const environ = await readFile(`/proc/${server.pid}/environ`, 'utf8');
    for (const value of secretValues) expect(environ).not.toContain(value);
    const names = environ.split('\0').filter((entry) => entry !== '').map((entry) => entry.slice(0, entry.indexOf('=')));
    // HEARTH_ENVIRONMENT_FD is only set by the restart, so this PID went through it.
    expect(names.sort()).toEqual([...keptNames].sort());
    // The descriptor that carried the environment is closed again.
    const descriptors = await readdir(`/proc/${server.pid}/fd`);
    const targets = await Promise.all(descriptors.map((descriptor) => readlink(`/proc/${server.pid}/fd/${descriptor}`).catch(() => '')));
    expect(targets.filter((target) => target.includes('memfd:'))).toEqual([]);
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

describe('when it cannot restart itself', () => {
  let server: ChildServer | undefined;
  afterEach(async () => {
    await server?.kill();
    server = undefined;
  });

  it('with an IPC channel (a forking parent, tsx watch) it keeps its environment, says why once, and is non-dumpable all the same', async () => {
    // The sources through tsx, as under `tsx watch` (`npm run dev`), the parent that holds an IPC channel.
    server = await startAsUser({ ipc: true, command: sourcesStartCommand() });
    const asked = await fetch(`${server.baseUrl}/sessions`, { headers: { authorization: `Bearer ${fromEnvironment.AUTH_TOKEN}` } });
    expect(asked.status).toBe(200);
    const warnings = server.output().match(/could not fully harden its own process[^\n]*/g) ?? [];
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/besides the harmless ones.*IPC channel/);
    expect((await stat(`/proc/${server.pid}/environ`)).uid).toBe(0);
    expect(runAsUser('cat', [`/proc/${server.pid}/environ`]).stderr).toMatch(/Permission denied/);
    if (isRoot) expect(await readFile(`/proc/${server.pid}/environ`, 'utf8')).toContain(fromEnvironment.AWS_SECRET_ACCESS_KEY);
  });

  it('refuses to start on a HEARTH_ENVIRONMENT_FD it did not pass itself, rather than run without its environment', async () => {
    const dataDir = await folderOwnedBy(user, 'hearth-process-never-');
    folders.push(dataDir);
    const start = builtStartCommand();
    const child = spawn(start.executable, start.args, {
      env: { PATH: process.env.PATH, HOME: process.env.HOME, HEARTH_ENVIRONMENT_FD: '1', PORT: '0', DATA_DIR: dataDir },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let errors = '';
    child.stderr.on('data', (data: Buffer) => (errors += data.toString()));
    try {
      await waitUntil(() => child.exitCode !== null, 15_000);
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
    }
    expect(child.exitCode).toBe(1);
    expect(errors).toMatch(/^hearth: HEARTH_ENVIRONMENT_FD=1 does not name the descriptor Hearth passes to itself/m);
  });
});
