// Issue 23, MCP stdio servers: through the real server, with mcp.json as a person writes it.
// - A server of the model's choosing (the fixture's `probe`), granted network, the strongest
//   grant an entry can hold, reads nothing of Hearth (database, `.env`, the environment of the
//   process above it or of Hearth) and reaches no spelling of Hearth's address.
// - The reference filesystem server, granted one folder read-write, lists and writes exactly
//   that folder; a sibling folder, though given to it as an allowed directory too, does not
//   exist in its jail.
// - `"jail": false` runs the server as Hearth's user, on purpose, and GET /agents/tools says so.
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EventSocket } from '../support/event-socket.ts';
import { filesystemScript, fixtureServer } from '../support/mcp-servers.ts';
import { waitUntil } from '../support/wait-until.ts';
import { hearthAddresses } from './jail-attack-programs.ts';
import { attackerProfile, callTools, expectNothingLeaked, startJailedHearth, storePrivateMessage, type JailedHearth } from './jail-harness.ts';

const privateMessage = 'the alarm code is 3090-M';

let hearth: JailedHearth;
let socket: EventSocket;
let outside: string;
let allowed: string;
let sibling: string;
const siblingText = 'sibling folder secret 57c1';

beforeAll(async () => {
  outside = await mkdtemp(path.join(tmpdir(), 'hearth-mcp-jail-'));
  allowed = path.join(outside, 'allowed');
  sibling = path.join(outside, 'sibling');
  await mkdir(allowed);
  await mkdir(sibling);
  await writeFile(path.join(allowed, 'shopping.txt'), 'milk\n');
  await writeFile(path.join(sibling, 'private.txt'), siblingText);
  const fixture = fixtureServer();
  hearth = await startJailedHearth({
    mcpConfig: {
      mcpServers: {
        prober: { ...fixture, jail: { paths: {}, network: true } },
        files: { command: process.execPath, args: [filesystemScript, allowed, sibling], jail: { paths: { [allowed]: 'rw' } } },
        loose: { ...fixture, jail: false },
      },
    },
    profiles: {
      attacker: attackerProfile([
        'prober__probe',
        'files__list_directory',
        'files__write_file',
        'files__read_text_file',
        'files__list_allowed_directories',
        'loose__probe',
      ]),
    },
  });
  await waitUntil(async () => {
    const { body } = await hearth.request('GET', '/agents/tools');
    const servers = body.servers as { name: string; status: string; message?: string }[];
    const failed = servers.find((server) => server.status === 'failed');
    if (failed) throw new Error(`${failed.name} failed: ${failed.message}`);
    return servers.length === 3 && servers.every((server) => server.status === 'connected');
  }, 60_000);
  await storePrivateMessage(hearth, privateMessage);
  socket = await hearth.connect(await hearth.createSession('attacker'));
}, 120_000);

afterAll(async () => {
  socket?.close();
  await hearth?.close();
  if (outside) await rm(outside, { recursive: true, force: true });
});

const probeArguments = () => ({
  reads: [
    path.join(hearth.dataDir, 'hearth.db'),
    path.join(hearth.dataDir, 'hearth.db-wal'),
    path.join(hearth.dataDir, 'mcp.json'),
    path.join(hearth.projectDir, '.env'),
    '/proc/{ppid}/environ',
    `/proc/${hearth.pid}/environ`,
    `/proc/${hearth.parentPid}/environ`,
    path.join(sibling, 'private.txt'),
  ],
  urls: hearthAddresses().map((address) => `http://${address}:${hearth.port}/approvals?status=pending`),
});

describe('MCP stdio servers in their jails', () => {
  it('a server granted network reads nothing of Hearth and reaches no spelling of it', async () => {
    const fromRequest = hearth.llm.requests.length;
    const input = probeArguments();
    const [result] = await callTools(hearth, socket, [{ name: 'prober__probe', arguments: input }], { timeoutMs: 90_000 });
    expect(result!.success, result!.result).toBe(true);
    const found = JSON.parse(result!.result) as { reads: Record<string, string>; urls: Record<string, string> };
    expectNothingLeaked(hearth, [result!], fromRequest, [privateMessage, siblingText]);
    // The process above it in the jail is bubblewrap's, with nothing of Hearth's: readable or not, expectNothingLeaked judges it.
    for (const file of input.reads.filter((file) => file !== '/proc/{ppid}/environ')) expect(found.reads[file], file).toMatch(/^error/);
    expect(Object.keys(found.urls)).toHaveLength(input.urls.length);
    for (const [url, outcome] of Object.entries(found.urls)) expect(outcome, url).toMatch(/^error/);
  }, 120_000);

  it('the filesystem server granted one folder lists and writes exactly it, and finds no sibling', async () => {
    const fromRequest = hearth.llm.requests.length;
    // write_file is destructive, so the gate asks: the person allows, and only the jail stands in the way.
    const [allowedDirectories, listed, written, siblingRead, siblingList, siblingWrite] = await callTools(hearth, socket, [
      { name: 'files__list_allowed_directories', arguments: {} },
      { name: 'files__list_directory', arguments: { path: allowed } },
      { name: 'files__write_file', arguments: { path: path.join(allowed, 'note.txt'), content: 'written through the jail' } },
      { name: 'files__read_text_file', arguments: { path: path.join(sibling, 'private.txt') } },
      { name: 'files__list_directory', arguments: { path: sibling } },
      { name: 'files__write_file', arguments: { path: path.join(sibling, 'planted.txt'), content: 'escaped' } },
    ], { allowAsked: true });
    expect(allowedDirectories!.result).toContain(allowed);
    // The server skipped the sibling at start: in its jail the folder does not exist.
    expect(allowedDirectories!.result).not.toContain(sibling);
    expect(listed!.success, listed!.result).toBe(true);
    expect(listed!.result).toContain('shopping.txt');
    expect(written!.success, written!.result).toBe(true);
    expect(await readFile(path.join(allowed, 'note.txt'), 'utf8')).toBe('written through the jail');
    for (const refused of [siblingRead, siblingList, siblingWrite]) expect(refused!.success, refused!.result).toBe(false);
    expect(existsSync(path.join(sibling, 'planted.txt'))).toBe(false);
    expectNothingLeaked(hearth, [allowedDirectories!, listed!, written!, siblingRead!, siblingList!, siblingWrite!], fromRequest, [privateMessage, siblingText]);
  }, 120_000);

  it('"jail": false runs the server unjailed, on purpose, and GET /agents/tools says so', async () => {
    const { body } = await hearth.request('GET', '/agents/tools');
    const unjailed = Object.fromEntries((body.servers as { name: string; unjailed?: boolean }[]).map((server) => [server.name, server.unjailed === true]));
    expect(unjailed).toEqual({ prober: false, files: false, loose: true });
    // Unjailed, it reads what Hearth's user reads: the sibling file no jailed server found.
    const [result] = await callTools(hearth, socket, [{ name: 'loose__probe', arguments: { reads: [path.join(sibling, 'private.txt')], urls: [] } }]);
    expect(JSON.parse(result!.result).reads[path.join(sibling, 'private.txt')]).toBe(siblingText);
  }, 60_000);
});
