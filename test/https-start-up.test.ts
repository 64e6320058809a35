import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { chmod, copyFile, mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { builtStartCommand } from './support/hearth-build.ts';
import { prepareProfiles } from './support/server-child.ts';
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

/** Runs the built Hearth as the unprivileged user until it exits on its own. */
async function runAsUser(environment: Record<string, string>): Promise<{ code: number | null; output: string; dataDir: string }> {
  const dataDir = await folderOwnedBy(user, 'hearth-tls-start-');
  cleanups.push(() => rm(dataDir, { recursive: true, force: true }));
  await prepareProfiles(dataDir);
  const start = builtStartCommand();
  const child = spawn(start.executable, start.args, {
    uid: user.uid,
    gid: user.gid,
    cwd: dataDir,
    env: { PATH: process.env.PATH, HOME: user.home, HOST: '127.0.0.1', PORT: '0', DATA_DIR: dataDir, PROFILES_DIR: path.join(dataDir, 'profiles'), LOG_LEVEL: 'info', ...environment },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (data: Buffer) => (output += data.toString()));
  child.stderr.on('data', (data: Buffer) => (output += data.toString()));
  const [code] = (await once(child, 'exit')) as [number | null];
  return { code, output, dataDir };
}

const fix = 'Fix the file, or unset TLS_CERT_FILE and TLS_KEY_FILE for plain HTTP.';

describe.skipIf(process.platform !== 'linux')('start-up with TLS files it cannot use', () => {
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
