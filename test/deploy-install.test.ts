// deploy/install.sh and deploy/uninstall.sh, run for real against a throwaway root (--root): the
// folders, files and unit they write, the unit's ExecStart started as the user the script created,
// an upgrade that leaves the data alone, and an uninstall that keeps it unless --purge.
//
// What this skips, and why: the script's `npm ci` (--skip-npm-ci hard-links this checkout's
// node_modules instead, a download of minutes; the build `npm ci` runs through `prepare` still
// runs), apt (bubblewrap and passt are installed here) and systemctl (systemd is not PID 1 here;
// --root implies --no-systemctl). The user is real, named for this test, and removed at the end.
import { execFile, spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, readFileSync, realpathSync, statSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { unusedPort } from './support/llm-helpers.ts';
import { waitUntil } from './support/wait-until.ts';

const run = promisify(execFile);
const checkout = path.resolve('.');
const systemdAnalyze = '/usr/bin/systemd-analyze';
const testUser = 'hearth-install-test';
const isRoot = process.getuid?.() === 0;

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function userExists(name: string): Promise<boolean> {
  return run('getent', ['passwd', name]).then(
    () => true,
    () => false,
  );
}

async function processesOf(name: string): Promise<string> {
  // ps exits 1 when the user runs nothing.
  return run('ps', ['-u', name, '-o', 'pid=,args=']).then(
    ({ stdout }) => stdout.trim(),
    () => '',
  );
}

async function script(name: 'install.sh' | 'uninstall.sh', args: string[]): Promise<string> {
  const { stdout, stderr } = await run('bash', [path.join(checkout, 'deploy', name), ...args], {
    cwd: checkout,
    env: { PATH: process.env.PATH, HOME: process.env.HOME, LANG: 'C.UTF-8' },
    maxBuffer: 16 * 1024 * 1024,
  });
  return stdout + stderr;
}

function unitValues(unit: string, key: string): string[] {
  return [...unit.matchAll(new RegExp(`^${key}=(.*)$`, 'gm'))].map((match) => match[1]!.trim());
}

function assignments(lines: string[]): Record<string, string> {
  return Object.fromEntries(lines.map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)]));
}

/** Every regular file under a folder, by path relative to it. */
async function filesUnder(folder: string): Promise<string[]> {
  const entries = await readdir(folder, { recursive: true, withFileTypes: true });
  return entries.filter((entry) => entry.isFile()).map((entry) => path.relative(folder, path.join(entry.parentPath, entry.name)));
}

describe.skipIf(!isRoot)('deploy/install.sh into a throwaway root', () => {
  it('installs, its unit verifies and runs as the new user, a second run upgrades without touching the data, and uninstall keeps the data unless --purge', async () => {
    // A run killed half-way leaves its user behind; it owns nothing outside its temp root.
    if (await userExists(testUser)) await run('userdel', [testUser]);
    const root = await mkdtemp(path.join(tmpdir(), 'hearth-install-'));
    // The service's user walks down to /opt/hearth and /var/lib/hearth through it.
    await chmod(root, 0o755);
    cleanups.push(async () => {
      if (await userExists(testUser)) await run('userdel', [testUser]);
      await rm(root, { recursive: true, force: true });
    });
    const under = (final: string) => path.join(root, final);
    const common = ['--root', root, '--user', testUser, '--from', checkout, '--skip-npm-ci'];

    // First run: a new user, its folders, the code and the unit.
    const first = await script('install.sh', [...common, '--groups', 'adm,hearth-no-such-group', '--yes']);
    expect(first).toContain('journalctl -u hearth -f');
    expect(first).toMatch(/^Hearth: +http:\/\/127\.0\.0\.1:8000$/m);
    expect(first).toContain('no group hearth-no-such-group on this machine: skipped');
    const user = (await run('id', ['-u', testUser])).stdout.trim();
    expect((await run('id', ['-nG', testUser])).stdout.trim().split(' ').sort()).toEqual(['adm', testUser]);
    expect((await run('getent', ['passwd', testUser])).stdout).toMatch(/:\/var\/lib\/hearth:\/usr\/sbin\/nologin$/m);

    const state = statSync(under('/var/lib/hearth'));
    expect([String(state.uid), state.mode & 0o777]).toEqual([user, 0o750]);
    const settings = statSync(under('/etc/hearth/hearth.env'));
    expect([settings.uid, settings.mode & 0o777]).toEqual([0, 0o600]);
    expect(existsSync(under('/opt/hearth/dist/main.js'))).toBe(true);
    // The copy is what git tracks or would track: none of the checkout's local files.
    expect(existsSync(under('/opt/hearth/.env'))).toBe(false);
    expect(existsSync(under('/opt/hearth/node_modules/.cache'))).toBe(false);

    const unitFile = under('/etc/systemd/system/hearth.service');
    const unit = readFileSync(unitFile, 'utf8');
    const node = realpathSync((await run('sh', ['-c', 'command -v node'])).stdout.trim());
    expect(unitValues(unit, 'ExecStart')).toEqual([`${node} /opt/hearth/dist/main.js`]);
    expect([unitValues(unit, 'User'), unitValues(unit, 'Group')]).toEqual([[testUser], [testUser]]);
    // The hardening the unit's comments and docs/operations.md explain, as written.
    expect(unitValues(unit, 'CapabilityBoundingSet')).toEqual(['']);
    expect(unitValues(unit, 'NoNewPrivileges')).toEqual(['yes']);
    for (const key of ['PrivateDevices', 'ProtectClock', 'ProtectHostname', 'RestrictNamespaces', 'PrivateUsers', 'SystemCallFilter']) expect(unitValues(unit, key), key).toEqual([]);

    // CI installs systemd-analyze and sets HEARTH_REQUIRE_SYSTEMD_ANALYZE=1, so there a missing one fails.
    if (existsSync(systemdAnalyze) || process.env.HEARTH_REQUIRE_SYSTEMD_ANALYZE === '1') {
      const verified = await run(systemdAnalyze, ['verify', unitFile], { cwd: path.dirname(unitFile) });
      expect(verified.stderr).toBe('');
      expect(verified.stdout).toBe('');
    }

    // Its ExecStart, as its user with its groups, no new privileges and no capabilities (what
    // setpriv can give of the unit), in its working folder with its environment, paths under the root.
    const mapped = (value: string) => value.replace(/(^|[\s=])(\/opt\/hearth|\/var\/lib\/hearth|\/etc\/hearth)/g, (_, before: string, final: string) => before + under(final));
    const [executable, ...args] = mapped(unitValues(unit, 'ExecStart')[0]!).split(/\s+/);
    const settingLines = readFileSync(under('/etc/hearth/hearth.env'), 'utf8').split('\n').filter((line) => /^[A-Z_]+=/.test(line));
    const port = await unusedPort();
    const environment: Record<string, string> = {
      PATH: '/usr/local/bin:/usr/bin:/bin',
      HOME: under('/var/lib/hearth'),
      ...assignments(unitValues(unit, 'Environment').map(mapped)),
      ...assignments(settingLines),
      HOST: '127.0.0.1',
      PORT: String(port),
      OLLAMA_HOST: `http://127.0.0.1:${await unusedPort()}`,
      LOG_LEVEL: 'warn',
    };
    expect(environment.DATA_DIR).toBe(under('/var/lib/hearth'));
    const server = spawn('setpriv', ['--reuid', testUser, '--regid', testUser, '--init-groups', '--no-new-privs', '--bounding-set=-all', '--', executable!, ...args], {
      cwd: mapped(unitValues(unit, 'WorkingDirectory')[0]!),
      env: environment,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    server.stdout.on('data', (data: Buffer) => (output += data.toString()));
    server.stderr.on('data', (data: Buffer) => (output += data.toString()));
    const exited = once(server, 'exit');
    cleanups.push(async () => {
      if (server.exitCode === null && server.signalCode === null) server.kill('SIGKILL');
      await exited;
    });
    const baseUrl = `http://127.0.0.1:${port}`;
    const health = await waitUntil(async () => {
      if (server.exitCode !== null) throw new Error(`the unit's ExecStart exited (${server.exitCode}): ${output}`);
      const response = await fetch(`${baseUrl}/health`).catch(() => undefined);
      return response?.status === 200 && ((await response.json()) as { status: string; jail: { state: string } });
    }, 30_000);
    expect(health.status).toBe('ok');
    // The jail works under the service's user without capabilities.
    expect(health.jail.state).toBe('on');
    const page = await fetch(`${baseUrl}/`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    expect(await page.text()).toContain('<html');
    expect(existsSync(under('/var/lib/hearth/hearth.db'))).toBe(true);
    server.kill('SIGTERM');
    expect((await exited)[0]).toBe(0);
    // Nothing of the service's user outlives it (its jails, the build service of user tools).
    expect(await waitUntil(async () => (await processesOf(testUser)) === '' || undefined, 10_000)).toBe(true);
    // It wrote only under its state folder (ProtectSystem=strict would refuse the rest).
    const ownedByService = (await filesUnder(under('/opt/hearth'))).filter((file) => String(statSync(under(`/opt/hearth/${file}`)).uid) === user);
    expect(ownedByService).toEqual([]);

    // The person's data and settings, which an upgrade must leave as they are, byte for byte.
    await writeFile(under('/var/lib/hearth/persona.md'), 'You are our house assistant.\n');
    await writeFile(under('/etc/hearth/hearth.env'), `${readFileSync(under('/etc/hearth/hearth.env'), 'utf8')}PORT=8123\n`);
    const kept = ['/var/lib/hearth/hearth.db', '/var/lib/hearth/persona.md', '/etc/hearth/hearth.env'];
    const before = kept.map((file) => readFileSync(under(file)));
    const stateBefore = await stat(under('/var/lib/hearth'));
    const settingsBefore = await stat(under('/etc/hearth/hearth.env'));
    // A file the old version had and the new one does not.
    await writeFile(under('/opt/hearth/removed-upstream.js'), '');

    const second = await script('install.sh', common);
    expect(second).toContain(`exists: uid=${user}(${testUser})`);
    expect(second).toContain('kept: adm (--groups changes them)');
    expect(second).toMatch(/^Hearth: +http:\/\/127\.0\.0\.1:8123$/m);
    expect(kept.map((file) => readFileSync(under(file)))).toEqual(before);
    const stateAfter = await stat(under('/var/lib/hearth'));
    const settingsAfter = await stat(under('/etc/hearth/hearth.env'));
    expect([stateAfter.uid, stateAfter.mode, settingsAfter.uid, settingsAfter.mode, settingsAfter.mtimeMs]).toEqual([stateBefore.uid, stateBefore.mode, settingsBefore.uid, settingsBefore.mode, settingsBefore.mtimeMs]);
    expect(existsSync(under('/opt/hearth/removed-upstream.js'))).toBe(false);
    expect(existsSync(under('/opt/hearth/dist/main.js'))).toBe(true);
    expect(existsSync(under('/opt/hearth.old')) || existsSync(under('/opt/hearth.new'))).toBe(false);
    expect((await run('id', ['-nG', testUser])).stdout.trim().split(' ').sort()).toEqual(['adm', testUser]);

    // Uninstall: the code and the unit go; the data, the settings and the user stay.
    await script('uninstall.sh', ['--root', root, '--user', testUser]);
    expect([existsSync(unitFile), existsSync(under('/opt/hearth'))]).toEqual([false, false]);
    expect(kept.map((file) => readFileSync(under(file)))).toEqual(before);
    expect(await userExists(testUser)).toBe(true);
    // --purge without --yes and without a terminal to ask on refuses, and deletes nothing.
    await expect(script('uninstall.sh', ['--root', root, '--user', testUser, '--purge'])).rejects.toThrow(/add --yes/);
    expect(existsSync(under('/var/lib/hearth/hearth.db'))).toBe(true);
    await script('uninstall.sh', ['--root', root, '--user', testUser, '--purge', '--yes']);
    expect([existsSync(under('/var/lib/hearth')), existsSync(under('/etc/hearth')), await userExists(testUser)]).toEqual([false, false, false]);
  }, 180_000);

  it('refuses a Node older than 20.19, or one the service cannot see, saying how to get one, before writing anything', async () => {
    const root = await mkdtemp(path.join(tmpdir(), 'hearth-install-'));
    cleanups.push(() => rm(root, { recursive: true, force: true }));
    const bin = path.join(root, 'bin');
    const fakeNode = async (version: string) => {
      await mkdir(bin, { recursive: true });
      await writeFile(path.join(bin, 'node'), `#!/bin/sh\necho ${version}\n`, { mode: 0o755 });
    };
    const install = () =>
      run('bash', [path.join(checkout, 'deploy', 'install.sh'), '--root', path.join(root, 'target'), '--user', testUser, '--yes'], {
        env: { PATH: `${bin}:${process.env.PATH}`, LANG: 'C.UTF-8' },
      }).then(
        () => 'exited 0',
        (error: { code: number; stderr: string }) => `exited ${error.code}: ${error.stderr}`,
      );

    // 20.18 runs ES modules but cannot require one, as the built server does (marked): too old too.
    await fakeNode('20.18.3');
    const old = await install();
    expect(old).toMatch(/^exited 1: .*node is Node\.js 20\.18\.3, older than 20\.19\.0\./);
    expect(old).toContain('curl -fsSL https://deb.nodesource.com/setup_22.x -o /tmp/nodesource_setup.sh');
    expect(old).toContain('sudo apt-get install -y nodejs');
    // A new enough node in a folder the unit hides (here the temp folder, as ~/.nvm under /home).
    await fakeNode('22.11.0');
    expect(await install()).toMatch(/^exited 1: .*node is in a folder the service does not see \(ProtectHome=, PrivateTmp=\)\./);
    expect(await readdir(path.join(root, 'target'))).toEqual([]);
    expect(await userExists(testUser)).toBe(false);
  });
});
