// Issue 35: the shipped mcp.example.json's `files` server ("did not answer initialize within 10 s":
// inside its jail npx had no network and waited on the registry, even with the package cached).
// Now an npx entry is prepared once, with network, outside the jail (npm fetches the package into
// Hearth's npm cache, running nothing of it), then runs in its jail without network, npx offline
// from that cache. Through the real server, with the example's entry as shipped (its folder
// swapped for the test's), a registry stand-in on loopback (the person's registry, named in
// their ~/.npmrc: unreachable from any jail), as an unprivileged user (as Hearth runs when
// installed) and as Hearth's user. The unprivileged run fetches the package into an empty cache;
// Hearth's user's run starts from a copy of that cache without the mark a finished preparation
// leaves, so its preparation is the same real `npm exec`, which asks the registry and finds the
// package unpacked (a full fetch of its 107 packages costs npm 7 CPU-seconds).
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { packageRoot } from '../../src/package-root.ts';
import { npmRegistryStandIn, type NpmRegistryStandIn } from '../support/npm-registry-stand-in.ts';
import { folderOwnedBy, giveFolderTo, unprivilegedUser } from '../support/unprivileged-user.ts';
import { waitUntil } from '../support/wait-until.ts';
import { attackerProfile, callTools, startJailedHearth, type JailedHearth } from './jail-harness.ts';

const run = promisify(execFile);

const runs = [
  { name: 'as an unprivileged user, into an empty npm cache', unprivileged: true },
  { name: "as Hearth's user, into a cache holding the package unpacked", unprivileged: false },
];

let registry: NpmRegistryStandIn;
/** The unprivileged run's npm cache once its server connected, its preparation marks left out. */
let fetchedCache: string | undefined;
beforeAll(async () => {
  registry = await npmRegistryStandIn('@modelcontextprotocol/server-filesystem', packageRoot);
}, 60_000);
afterAll(async () => {
  await registry?.close();
  if (fetchedCache) await rm(path.dirname(fetchedCache), { recursive: true, force: true });
});

interface ServerStatus {
  name: string;
  status: string;
  message?: string;
}

describe.each(runs)("mcp.example.json's files server, $name", ({ unprivileged }) => {
  let hearth: JailedHearth;
  let home: string;
  let documents: string;
  const messages: string[] = [];
  let requestsAtConnect = 0;
  let tarballsFetched = 0;
  /** What the registry heard for the files server, the missing package's requests left out. */
  const filesRequests = () => registry.requests.filter((request) => !request.includes('hearth-no-such-package')).length;

  beforeAll(async () => {
    const user = unprivileged ? await unprivilegedUser() : undefined;
    home = user ? await folderOwnedBy(user, 'hearth-example-home-') : await mkdtemp(path.join(tmpdir(), 'hearth-example-home-'));
    documents = path.join(home, 'Documents');
    await mkdir(documents);
    await writeFile(path.join(home, '.npmrc'), `registry=${registry.url}\n`);
    if (user) await giveFolderTo(user, home);
    const example = JSON.parse(await readFile(path.join(packageRoot, 'mcp.example.json'), 'utf8')) as { mcpServers: { files: unknown } };
    const files = JSON.parse(JSON.stringify(example.mcpServers.files).replaceAll('/home/me/Documents', documents));
    const requestsBefore = filesRequests();
    const requestIndexBefore = registry.requests.length;
    if (!unprivileged && fetchedCache === undefined) throw new Error('the unprivileged run left no npm cache to start from');
    hearth = await startJailedHearth({
      ...(user && { user }),
      ...(!unprivileged && { dataFolders: { 'npm-cache': fetchedCache! } }),
      environment: { HOME: home },
      mcpConfig: { mcpServers: { files, missing: { command: 'npx', args: ['-y', 'hearth-no-such-package'] } } },
      profiles: { attacker: attackerProfile(['files__write_file', 'files__list_allowed_directories']) },
    });
    // A start that fails (initialize's 10 s passing on a loaded machine) is tried again with backoff: waited through, and named if it never connects.
    await waitUntil(async () => {
      const servers = (await hearth.request('GET', '/agents/tools')).body.servers as ServerStatus[];
      const server = servers.find((entry) => entry.name === 'files');
      if (server?.message !== undefined && !messages.includes(server.message)) messages.push(server.message);
      return server?.status === 'connected';
    }, 120_000).catch((error: Error) => {
      throw new Error(`files did not connect: ${messages.join(' | ')} (${error.message})`);
    });
    requestsAtConnect = filesRequests();
    expect(requestsAtConnect).toBeGreaterThan(requestsBefore);
    tarballsFetched = registry.requests.slice(requestIndexBefore).filter((request) => request.startsWith('/-/tarballs/')).length;
    if (unprivileged) {
      const copy = path.join(await mkdtemp(path.join(tmpdir(), 'hearth-example-cache-')), 'npm-cache');
      await mkdir(copy);
      const cache = path.join(hearth.dataDir, 'npm-cache');
      // Linked, not copied (Hearth's user's run copies it into its own data folder); the links of node_modules/.bin kept links.
      await run('cp', ['-R', '--link', '--no-dereference', path.join(cache, '_cacache'), path.join(cache, '_npx'), copy]);
      fetchedCache = copy;
    }
  }, 150_000);

  afterAll(async () => {
    await hearth?.close();
    if (home) await rm(home, { recursive: true, force: true });
  });

  it('is prepared once into Hearth\'s npm cache, with its progress in the status, then connects from the cache alone', async () => {
    expect(messages).toContainEqual(expect.stringMatching(/^preparing: npm is fetching @modelcontextprotocol\/server-filesystem into Hearth's npm cache/));
    // Into an empty cache npm downloads every package; into one holding them unpacked, none.
    if (unprivileged) expect(tarballsFetched).toBeGreaterThan(0);
    else expect(tarballsFetched).toBe(0);
    const cache = path.join(hearth.dataDir, 'npm-cache');
    expect(existsSync(path.join(cache, '_npx'))).toBe(true);
    expect(existsSync(path.join(home, '.npm'))).toBe(false);

    const socket = await hearth.connect(await hearth.createSession('attacker'));
    const target = path.join(documents, 'notes.txt');
    const asked: string[] = [];
    socket.socket.on('message', (data) => {
      const event = JSON.parse(String(data)) as { type?: string; subject?: string };
      if (event.type === 'approval_required') asked.push(event.subject!);
    });
    const [allowed, written] = await callTools(
      hearth,
      socket,
      [
        { name: 'files__list_allowed_directories', arguments: {} },
        { name: 'files__write_file', arguments: { path: target, content: 'water the plants' } },
      ],
      { allowAsked: true },
    );
    socket.close();
    expect(allowed!.result).toContain(documents);
    expect(written!.success).toBe(true);
    expect(await readFile(target, 'utf8')).toBe('water the plants');
    // The card asked with the path it writes.
    expect(asked).toEqual([`path=${target}`]);
    // Nothing reached the registry once the server was prepared: the jail has no network, and npx ran offline.
    expect(filesRequests()).toBe(requestsAtConnect);
  }, 60_000);

  it('a package npm cannot fetch says why in its status, not a bare timeout', async () => {
    const missing = await waitUntil(async () => {
      const servers = (await hearth.request('GET', '/agents/tools')).body.servers as ServerStatus[];
      const server = servers.find((entry) => entry.name === 'missing');
      return server?.status === 'failed' ? server : undefined;
    }, 30_000);
    expect(missing.message).toMatch(/^npm could not fetch hearth-no-such-package into Hearth's npm cache from http:\/\/127\.0\.0\.1:\d+\/: 404 Not Found/);
  });
});
