// `hearth backup` while a turn streams, and `hearth restore` of that archive on another DATA_DIR,
// both run as the command-line tool in child processes against a server in a child process
// (the lock a restore checks is the running server's).
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import SqliteDatabase from 'better-sqlite3';
import { Kysely, SqliteDialect } from 'kysely';
import { migrationNames, migratorFor } from '../src/store/migrations/index.ts';
import { builtCliCommand, builtStartCommand } from './support/hearth-build.ts';
import { useHearth } from './support/hearth-server.ts';
import type { ScriptedLlm } from './support/scripted-llm.ts';
import { startScriptedOllama } from './support/scripted-ollama.ts';
import { prepareProfiles, startChildServer, type ChildServer } from './support/server-child.ts';
import { testHomeFolders } from './support/test-home-folders.ts';
import { waitUntil } from './support/wait-until.ts';

const run = promisify(execFile);

let folder: string;
let llm: ScriptedLlm;
let child: ChildServer | undefined;
/** A second server started beside `child`: ended (refused) before `child` is, so it never gets the lock. */
let secondServer: Promise<unknown> | undefined;

beforeEach(async () => {
  folder = await mkdtemp(path.join(tmpdir(), 'hearth-backup-'));
  llm = await startScriptedOllama();
});
afterEach(async () => {
  await secondServer?.catch(() => undefined);
  secondServer = undefined;
  await child?.kill();
  child = undefined;
  await llm.close();
  await rm(folder, { recursive: true, force: true });
});
// Registered after the hook above, so the app is closed before its folder is removed.
const startApp = useHearth();

/** Runs `npm start`'s command (this run's build) until it exits on its own. */
async function runServerUntilExit(environment: Record<string, string>): Promise<{ code: number; output: string }> {
  const { executable, args } = builtStartCommand();
  const env = { PATH: process.env.PATH!, HOME: folder, HOST: '127.0.0.1', PORT: '0', ...testHomeFolders(folder), ...environment };
  try {
    const { stdout, stderr } = await run(executable, args, { cwd: folder, env, timeout: 60_000 });
    return { code: 0, output: stdout + stderr };
  } catch (error) {
    const failed = error as { code?: number; stdout: string; stderr: string };
    if (typeof failed.code !== 'number') throw error;
    return { code: failed.code, output: failed.stdout + failed.stderr };
  }
}

/** `npx hearth <args>` as a child process, in a working folder with no `.env`, reading nothing of the person's. */
async function hearthCli(args: string[], environment: Record<string, string> = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  const { executable, args: nodeArgs } = builtCliCommand();
  const env = { PATH: process.env.PATH!, HOME: folder, ...testHomeFolders(folder), ...environment };
  try {
    const { stdout, stderr } = await run(executable, [...nodeArgs, ...args], { cwd: folder, env, timeout: 60_000 });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code?: number; stdout: string; stderr: string };
    if (typeof failed.code !== 'number') throw error;
    return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
  }
}

describe('hearth backup and restore', () => {
  it('an archive taken mid-answer brings back every session and fact on another DATA_DIR; restore refuses while the server runs, and a second Hearth on its DATA_DIR waits for it briefly, then stops in one line', async () => {
    const dataDir = path.join(folder, 'data');
    await prepareProfiles(dataDir);
    llm.respondWith((request) => {
      const last = request.body.messages.at(-1)?.content ?? '';
      // A piece every 25 ms keeps the answer going through the backup at a tenth of the CPU of one every 2 ms.
      if (last === 'Write at length') return { chunkCount: 100_000, chunkText: (index: number) => `word${index} `, delayMs: 25 };
      return { content: 'A short answer.' };
    });
    child = await startChildServer(dataDir, { LLM_BACKEND: 'ollama', OLLAMA_HOST: llm.url });
    // Its few seconds of waiting for the lock pass while the backup below is taken.
    const secondHearth = (secondServer = runServerUntilExit({ DATA_DIR: dataDir, PROFILES_DIR: path.join(dataDir, 'profiles'), OLLAMA_HOST: llm.url }));
    const first = (await child.request('POST', '/sessions', {})).body.session_id;
    expect((await child.request('POST', `/sessions/${first}/messages`, { content: 'First question' })).body.content).toBe('A short answer.');
    const fact = await child.request('PUT', '/memory/facts', { category: 'home', key: 'boiler', value: 'serviced in October' });
    expect(fact.status).toBe(200);
    const second = (await child.request('POST', '/sessions', {})).body.session_id;
    const socket = await child.connect(second);
    socket.send({ type: 'message', content: 'Write at length' });
    await socket.next('stream_delta');

    const archive = path.join(folder, 'mid-answer.tar.gz');
    const backup = await hearthCli(['backup', archive], { DATA_DIR: dataDir });
    expect(backup.stderr).toBe('');
    expect(backup.code).toBe(0);
    expect(backup.stdout).toContain(`to ${archive}`);
    // Still streaming: the backup neither waited for the turn nor stopped it.
    expect(socket.ofType('stream_end')).toEqual([]);
    const deltas = socket.ofType('stream_delta').length;
    await waitUntil(() => socket.ofType('stream_delta').length > deltas);

    const refused = await hearthCli(['restore', archive], { DATA_DIR: dataDir });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toBe(
      `hearth: A Hearth is running on DATA_DIR ${dataDir} (it holds ${path.join(dataDir, 'hearth.lock')}). Stop it first (\`systemctl stop hearth\`), then restore. Nothing was changed.\n`,
    );
    const { code, output } = await secondHearth;
    expect(code).toBe(1);
    expect(output).toBe(
      `hearth: A Hearth is running on DATA_DIR ${dataDir} (it holds ${path.join(dataDir, 'hearth.lock')}). Two cannot share one DATA_DIR: stop the other, or give this one its own.\n`,
    );
    expect((await child.request('GET', '/health')).status).toBe(200);
    socket.close();
    await child.kill();
    child = undefined;

    const other = path.join(folder, 'other');
    const restored = await hearthCli(['restore', archive, '--data-dir', other]);
    expect(restored.stderr).toBe('');
    expect(restored.code).toBe(0);
    expect(restored.stdout).toMatch(/^Restored the backup of .* the database at .*other\/hearth\.db and \d+ files in .*other\.\n$/);
    expect(await readdir(path.join(other, 'profiles'))).toEqual(await readdir(path.join(dataDir, 'profiles')));

    const hearth = await startApp({ dataDir: other, llm });
    const sessions = (await hearth.request('GET', '/sessions')).body.map((session: { session_id: string }) => session.session_id);
    expect(sessions.sort()).toEqual([first, second].sort());
    const firstMessages = (await hearth.request('GET', `/sessions/${first}`)).body.messages;
    expect(firstMessages.map((message: any) => [message.role, message.content])).toEqual([
      ['user', 'First question'],
      ['assistant', 'A short answer.'],
    ]);
    const secondMessages = (await hearth.request('GET', `/sessions/${second}`)).body.messages;
    expect(secondMessages[0]).toMatchObject({ role: 'user', content: 'Write at length' });
    const memory = (await hearth.request('GET', '/memory')).body;
    expect(memory.facts.map((saved: any) => [saved.category, saved.key, saved.value])).toEqual([['home', 'boiler', 'serviced in October']]);
    // What two tests of 20 s each did.
  }, 40_000);

  it('a start whose migration fails stops in one line that names the backup it took first and how to restore it', async () => {
    const dataDir = path.join(folder, 'data');
    await prepareProfiles(dataDir);
    const databaseFile = path.join(dataDir, 'hearth.db');
    const db = new Kysely<any>({ dialect: new SqliteDialect({ database: new SqliteDatabase(databaseFile) }) });
    expect((await migratorFor(db).migrateTo(migrationNames.at(-2)!)).error).toBeUndefined();
    // In the way of the last migration, which creates this table.
    await db.schema.createTable('documents').addColumn('id', 'text').execute();
    await db.destroy();

    const { code, output } = await runServerUntilExit({ DATA_DIR: dataDir, PROFILES_DIR: path.join(dataDir, 'profiles'), OLLAMA_HOST: llm.url });
    expect(code).toBe(1);
    const [backup] = await readdir(path.join(dataDir, 'backups'));
    const backupFile = path.join(dataDir, 'backups', backup!);
    expect(output).toMatch(new RegExp(`^hearth: Database migration ${migrationNames.at(-1)} failed on ${databaseFile}: table "documents" already exists\\. The database`));
    expect(output).toContain(`The database and DATA_DIR as they were before this start are in ${backupFile}.`);
    expect(output).toMatch(/`npx hearth restore .*\.tar\.gz`\.\n$/);

    const other = path.join(folder, 'other');
    await mkdir(other);
    const restored = await hearthCli(['restore', backupFile, '--data-dir', other]);
    expect(restored.code).toBe(0);
    const restoredDatabase = new SqliteDatabase(path.join(other, 'hearth.db'), { readonly: true });
    expect(restoredDatabase.prepare('SELECT name FROM kysely_migration ORDER BY name DESC LIMIT 1').pluck().get()).toBe(migrationNames.at(-2));
    restoredDatabase.close();
  });
});
