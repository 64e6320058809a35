import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { chmod, chown, copyFile, mkdtemp, readdir, rm } from 'node:fs/promises';
import { EventEmitter } from 'node:events';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { builtStartCommand } from './support/hearth-build.ts';
import { httpsClient } from './support/https-client.ts';
import { prepareProfiles } from './support/server-child.ts';
import { testHomeFolders } from './support/test-home-folders.ts';
import { startTestAuthority, type TestAuthority } from './support/tls-certificates.ts';
import { folderOwnedBy, unprivilegedUser, type UnprivilegedUser } from './support/unprivileged-user.ts';

// What a TLS pair Hearth cannot use does to `npm start`: one line naming the file and why, exit 1,
// before the database is opened. Run as an unprivileged user, as the service runs: root reads every file.

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});
let authority: TestAuthority;
let user: UnprivilegedUser;
beforeAll(async () => {
  [authority, user] = await Promise.all([startTestAuthority(), unprivilegedUser()]);
});
afterAll(() => authority.close());

/** A folder others may enter, holding a copy of a fresh pair: the certificate readable by all, the key by its owner (root) only. */
async function pairFolder(): Promise<{ certFile: string; keyFile: string; otherKeyFile: string }> {
  const folder = await mkdtemp(path.join(tmpdir(), 'hearth-tls-files-'));
  cleanups.push(() => rm(folder, { recursive: true, force: true }));
  await chmod(folder, 0o755);
  const [pair, other] = await Promise.all([authority.issue(), authority.issue()]);
  const certFile = path.join(folder, 'fullchain.pem');
  const keyFile = path.join(folder, 'privkey.pem');
  const otherKeyFile = path.join(folder, 'other-privkey.pem');
  await copyFile(pair.certFile, certFile);
  await copyFile(pair.keyFile, keyFile);
  await copyFile(other.keyFile, otherKeyFile);
  await chmod(certFile, 0o644);
  await chmod(keyFile, 0o600);
  await chmod(otherKeyFile, 0o644);
  return { certFile, keyFile, otherKeyFile };
}

/** Starts the built Hearth as the unprivileged user, as `npm start` under the unit would. */
async function spawnAsUser(environment: Record<string, string>) {
  const dataDir = await folderOwnedBy(user, 'hearth-tls-start-');
  cleanups.push(() => rm(dataDir, { recursive: true, force: true }));
  await prepareProfiles(dataDir);
  const start = builtStartCommand();
  const child = spawn(start.executable, start.args, {
    uid: user.uid,
    gid: user.gid,
    cwd: dataDir,
    env: {
      PATH: process.env.PATH,
      HOME: user.home,
      ...testHomeFolders(dataDir),
      HOST: '127.0.0.1',
      PORT: '0',
      DATA_DIR: dataDir,
      PROFILES_DIR: path.join(dataDir, 'profiles'),
      LOG_LEVEL: 'info',
      ...environment,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = once(child, 'exit') as Promise<[number | null, NodeJS.Signals | null]>;
  cleanups.push(async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await exited;
  });
  let output = '';
  const outputChanged = new EventEmitter();
  for (const stream of [child.stdout, child.stderr]) {
    stream.on('data', (data: Buffer) => {
      output += data.toString();
      outputChanged.emit('data');
    });
  }
  return { child, dataDir, exited, output: () => output, outputChanged };
}

/** Runs the built Hearth as the unprivileged user until it exits on its own. */
async function runAsUser(environment: Record<string, string>): Promise<{ code: number | null; output: string; dataDir: string }> {
  const started = await spawnAsUser(environment);
  const [code] = await started.exited;
  return { code, output: started.output(), dataDir: started.dataDir };
}

const fix = 'Fix the file, or unset TLS_CERT_FILE and TLS_KEY_FILE for plain HTTP.';

describe.skipIf(process.platform !== 'linux')('start-up with TLS files', () => {
  it('a pair the user can read: `npm start` serves HTTPS only, and ends on SIGTERM', async () => {
    const { certFile, keyFile } = await pairFolder();
    await chown(keyFile, user.uid, user.gid);
    const started = await spawnAsUser({ TLS_CERT_FILE: certFile, TLS_KEY_FILE: keyFile });
    // Fastify's line once it listens: the address it gives is an https:// one.
    const port = await new Promise<string>((resolve, reject) => {
      const look = () => {
        const found = /"msg":"Server listening at https:\/\/127\.0\.0\.1:(\d+)"/.exec(started.output());
        if (found) resolve(found[1]!);
      };
      started.outputChanged.on('data', look);
      void started.exited.then(([code]) => reject(new Error(`Hearth exited (${code}): ${started.output()}`)));
      look();
    });
    const client = httpsClient(`https://localhost:${port}`, authority.caPem);
    cleanups.push(() => client.close());
    expect(await client.request('GET', '/health')).toMatchObject({ status: 200, body: { status: 'ok' } });
    // Plain HTTP on the same port gets no answer from the API.
    await expect(fetch(`http://127.0.0.1:${port}/health`)).rejects.toThrow();
    started.child.kill('SIGTERM');
    expect((await started.exited)[0]).toBe(0);
  });

  it('a key the user cannot read stops start-up in one line naming it', async () => {
    expect(user.uid, 'the test needs a user who is not root').not.toBe(0);
    const { certFile, keyFile } = await pairFolder();
    const { code, output } = await runAsUser({ TLS_CERT_FILE: certFile, TLS_KEY_FILE: keyFile });
    expect(code).toBe(1);
    expect(output).toBe(`hearth: Cannot read TLS_KEY_FILE ${keyFile}: EACCES: permission denied, open '${keyFile}'. ${fix}\n`);
  });

  it('a certificate that is not there stops start-up in one line naming it, before the database is made', async () => {
    const { keyFile } = await pairFolder();
    const missing = path.join(path.dirname(keyFile), 'no-such-cert.pem');
    const { code, output, dataDir } = await runAsUser({ TLS_CERT_FILE: missing, TLS_KEY_FILE: keyFile });
    expect(code).toBe(1);
    expect(output).toBe(`hearth: Cannot read TLS_CERT_FILE ${missing}: ENOENT: no such file or directory, open '${missing}'. ${fix}\n`);
    expect(await readdir(dataDir)).not.toContain('hearth.db');
  });

  it('a key of another certificate stops start-up in one line saying they do not belong together', async () => {
    const { certFile, otherKeyFile } = await pairFolder();
    const { code, output } = await runAsUser({ TLS_CERT_FILE: certFile, TLS_KEY_FILE: otherKeyFile });
    expect(code).toBe(1);
    expect(output).toMatch(new RegExp(`^hearth: TLS_KEY_FILE ${otherKeyFile} is not the private key of TLS_CERT_FILE ${certFile} \\(or not a PEM key\\): .*key values mismatch\\. ${fix.replace(/[.()]/g, '\\$&')}\\n$`));
  });
});
