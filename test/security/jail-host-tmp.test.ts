// Issue 35: server_admin's terminal had a private /tmp: `ls /tmp` showed almost nothing, and an
// approved write to /tmp/... reported success while nothing appeared on the host. Now the host
// jail sees the host's /tmp, minus Hearth's own files there (its DATA_DIR when it lives there,
// tsx's cache of its compiled sources). Through the real server, as Hearth's user and as an
// unprivileged user.
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { chown, mkdir, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EventSocket } from '../support/event-socket.ts';
import { unprivilegedUser } from '../support/unprivileged-user.ts';
import { callTools, startJailedHearth, type JailedHearth } from './jail-harness.ts';

const runs = [
  { name: "as Hearth's user", unprivileged: false },
  { name: 'as an unprivileged user', unprivileged: true },
];

const terminal = (command: string) => ({ name: 'terminal', arguments: { command } });

describe.each(runs)("server_admin's terminal and the host's /tmp, $name", ({ unprivileged }) => {
  let hearth: JailedHearth;
  let socket: EventSocket;
  let uid: number;
  const mark = randomBytes(6).toString('hex');
  const hostFile = `/tmp/hearth-host-tmp-${mark}`;
  const written = `/tmp/hearth-host-tmp-written-${mark}`;
  let tsxCache: string;
  let madeTsxCache = false;

  beforeAll(async () => {
    const user = unprivileged ? await unprivilegedUser() : undefined;
    uid = user?.uid ?? process.getuid!();
    await writeFile(hostFile, 'on the host\n', { mode: 0o644 });
    // tsx's cache of Hearth's compiled sources, as `npm run dev` leaves it.
    tsxCache = `/tmp/tsx-${uid}`;
    if (!existsSync(tsxCache)) {
      await mkdir(tsxCache, { mode: 0o700 });
      await chown(tsxCache, uid, user?.gid ?? process.getgid!());
      madeTsxCache = true;
    }
    await writeFile(`${tsxCache}/hearth-compiled-${mark}.js`, 'compiled\n');
    hearth = await startJailedHearth({ ...(user && { user }) });
    socket = await hearth.connect(await hearth.createSession('server_admin'));
  }, 90_000);

  afterAll(async () => {
    socket?.close();
    await hearth?.close();
    await rm(hostFile, { force: true });
    await rm(written, { force: true });
    if (madeTsxCache) await rm(tsxCache, { recursive: true, force: true });
    else await rm(`${tsxCache}/hearth-compiled-${mark}.js`, { force: true });
  });

  it('ls /tmp shows the host\'s files, and an approved write lands on the host', async () => {
    const [listing, write] = await callTools(hearth, socket, [terminal('ls -a /tmp'), terminal(`echo written by the agent > ${written}`)], { allowAsked: true });
    expect(listing!.success).toBe(true);
    expect(listing!.result).toContain(`hearth-host-tmp-${mark}`);
    expect(write!.success).toBe(true);
    expect(await readFile(written, 'utf8')).toBe('written by the agent\n');
  });

  it("Hearth's own files under /tmp stay hidden: its DATA_DIR and tsx's cache", async () => {
    expect(hearth.dataDir.startsWith('/tmp/')).toBe(true);
    const database = `${hearth.dataDir}/hearth.db`;
    const [listing, read, cache] = await callTools(hearth, socket, [terminal(`ls -A ${hearth.dataDir}`), terminal(`cat ${database}`), terminal(`ls -A ${tsxCache}`)], { allowAsked: true });
    // DATA_DIR is an empty folder but for the covers over Hearth's files (the database is /dev/null) and the session's own folder.
    expect(listing!.result).not.toMatch(/\bjail\b/);
    expect(read!.result).not.toContain('SQLite format');
    expect(cache!.success).toBe(true);
    expect(cache!.result).not.toContain(`hearth-compiled-${mark}`);
    // The test could fail: on the host both hold them.
    expect(await readdir(hearth.dataDir)).toContain('jail');
    expect(await readFile(database, 'latin1')).toContain('SQLite format');
    expect(await readdir(tsxCache)).toContain(`hearth-compiled-${mark}.js`);
  });
});
