// Issue 31, attack 8: an MCP server started through npx got the person's `~/.npm` read-write in
// its jail, and could poison the cache their own unjailed npx trusts later. Through the real
// server, with a person's home of the test's own (holding a `~/.npm` as a real one would): the
// server is started by the real npx from a local package, npx's cache is `<DATA_DIR>/npm-cache`,
// and a write into `~/.npm` from inside the server's session fails and leaves it as it was.
// As Hearth's user (root in CI) and as an unprivileged user.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixtureScript } from '../support/mcp-servers.ts';
import { folderOwnedBy, giveFolderTo, unprivilegedUser } from '../support/unprivileged-user.ts';
import { waitUntil } from '../support/wait-until.ts';
import { attackerProfile, callTools, startJailedHearth, type JailedHearth } from './jail-harness.ts';

const projectModules = path.resolve(path.dirname(fixtureScript), '..', '..', 'node_modules');

const runs = [
  { name: "as Hearth's user", unprivileged: false },
  { name: 'as an unprivileged user', unprivileged: true },
];

describe.each(runs)('an MCP server started through npx, $name', ({ unprivileged }) => {
  let hearth: JailedHearth;
  let home: string;
  let packageFolder: string;

  beforeAll(async () => {
    const user = unprivileged ? await unprivilegedUser() : undefined;
    home = user ? await folderOwnedBy(user, 'hearth-npx-home-') : await mkdtemp(path.join(tmpdir(), 'hearth-npx-home-'));
    await mkdir(path.join(home, '.npm', '_cacache'), { recursive: true });
    await writeFile(path.join(home, '.npm', '_cacache', 'index'), 'the person\'s own cache\n');
    if (user) await giveFolderTo(user, home);
    // A packed local package whose bin is the fixture server: npx unpacks it into its cache and runs it, offline.
    packageFolder = await mkdtemp(path.join(tmpdir(), 'hearth-npx-package-'));
    await chmod(packageFolder, 0o755);
    const source = path.join(packageFolder, 'source');
    await mkdir(source);
    await writeFile(path.join(source, 'package.json'), JSON.stringify({ name: 'hearth-npx-fixture', version: '1.0.0', bin: { 'hearth-npx-fixture': 'server.mjs' } }));
    await writeFile(path.join(source, 'server.mjs'), `#!/usr/bin/env node\nimport ${JSON.stringify(fixtureScript)};\n`, { mode: 0o755 });
    const packed = spawnSync('npm', ['pack', '--pack-destination', packageFolder], { cwd: source, encoding: 'utf8', env: { PATH: process.env.PATH, HOME: home, npm_config_cache: path.join(packageFolder, 'pack-cache') } });
    if (packed.status !== 0) throw new Error(`npm pack: ${packed.stderr}`);
    const tarball = path.join(packageFolder, packed.stdout.trim().split('\n').at(-1)!);
    await chmod(tarball, 0o644);
    hearth = await startJailedHearth({
      ...(user && { user }),
      environment: { HOME: home },
      mcpConfig: {
        mcpServers: {
          npxed: {
            command: 'npx',
            args: ['--yes', '--package', tarball, 'hearth-npx-fixture'],
            cwd: packageFolder,
            env: { npm_config_update_notifier: 'false', npm_config_audit: 'false', npm_config_fund: 'false' },
            jail: { paths: { [path.dirname(fixtureScript)]: 'ro', [projectModules]: 'ro' }, network: false },
          },
        },
      },
      profiles: { attacker: attackerProfile(['npxed__echo', 'npxed__env', 'npxed__run_attached']) },
    });
    await waitUntil(async () => {
      const servers = (await hearth.request('GET', '/agents/tools')).body.servers as { status: string; message?: string }[];
      if (servers[0]?.status === 'failed') throw new Error(`npxed failed: ${servers[0].message}`);
      return servers[0]?.status === 'connected';
    }, 90_000);
  }, 120_000);

  afterAll(async () => {
    await hearth?.close();
    if (home) await rm(home, { recursive: true, force: true });
    if (packageFolder) await rm(packageFolder, { recursive: true, force: true });
  });

  it("npx caches under DATA_DIR, and a write into the person's ~/.npm fails and changes nothing", async () => {
    const before = await readdir(path.join(home, '.npm'), { recursive: true });
    const socket = await hearth.connect(await hearth.createSession('attacker'));
    const poison = path.join(home, '.npm', '_cacache', 'poison');
    const [echoed, environment, write] = await callTools(hearth, socket, [
      { name: 'npxed__echo', arguments: { text: 'started by npx' } },
      { name: 'npxed__env', arguments: {} },
      { name: 'npxed__run_attached', arguments: { command: '/bin/sh', args: ['-c', `echo poisoned > ${poison} 2>&3; echo "exit $?" >&3`] } },
    ]);
    socket.close();
    expect(echoed!.result).toContain('started by npx');
    expect(write!.result).toMatch(/exit [1-9]/);
    expect(existsSync(poison)).toBe(false);
    expect(await readdir(path.join(home, '.npm'), { recursive: true })).toEqual(before);
    const cache = path.join(hearth.dataDir, 'npm-cache');
    expect(JSON.parse(environment!.result.replace(/^[^{]*/, '').replace(/[^}]*$/, ''))).toMatchObject({ npm_config_cache: cache });
    expect(existsSync(path.join(cache, '_npx'))).toBe(true);
  }, 60_000);
});
