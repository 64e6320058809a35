import { copyFile, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import { Kysely, SqliteDialect } from 'kysely';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config.ts';
import { formatDoctorReport, runDoctor, type DoctorReport } from '../../src/operations/doctor.ts';
import { acquireInstanceLock } from '../../src/operations/instance-lock.ts';
import { openDatabase } from '../../src/store/database.ts';
import { migrationNames, migratorFor } from '../../src/store/migrations/index.ts';
import { unusedPort } from '../support/llm-helpers.ts';
import type { ScriptedLlm } from '../support/scripted-llm.ts';
import { startScriptedOllama } from '../support/scripted-ollama.ts';

// `hearth doctor` against real things: a scripted Ollama, closed ports, SQLite files, the lock.

let folder: string;
let llm: ScriptedLlm;
beforeEach(async () => {
  folder = await mkdtemp(path.join(tmpdir(), 'hearth-doctor-'));
  llm = await startScriptedOllama();
});
afterEach(async () => {
  await llm.close();
  await rm(folder, { recursive: true, force: true });
});

const configWith = (environment: Record<string, string> = {}) =>
  parseConfig({ DATA_DIR: path.join(folder, 'data'), OLLAMA_HOST: llm.url, OLLAMA_DEFAULT_MODEL: 'fake:latest', ...environment });

function finding(report: DoctorReport, label: string) {
  return report.sections.flatMap((section) => section.findings).find((found) => found.label === label);
}

describe('hearth doctor', () => {
  it('finds the backend and its model, and says what is not configured', async () => {
    const report = await runDoctor(configWith(), { envFile: undefined });
    expect(finding(report, 'LLM')).toEqual({ state: 'ok', label: 'LLM', detail: `ollama at ${llm.url}, model fake:latest` });
    expect(finding(report, 'Home Assistant')).toEqual({ state: 'note', label: 'Home Assistant', detail: 'not configured (HA_URL)' });
    expect(finding(report, 'MQTT')).toEqual({ state: 'note', label: 'MQTT', detail: 'not configured (MQTT_URL)' });
    expect(finding(report, 'settings')).toMatchObject({ state: 'note', detail: 'no .env file: defaults and the environment' });
    expect(finding(report, 'database')).toEqual({
      state: 'note',
      label: 'database',
      detail: `${path.join(folder, 'data', 'hearth.db')}: not created yet (the first start creates it)`,
    });
    expect(finding(report, 'node')?.state).toBe('ok');
  });

  it('names what cannot be reached, each with what to do, and counts them as problems', async () => {
    const closed = await unusedPort();
    const report = await runDoctor(
      configWith({ OLLAMA_HOST: `http://127.0.0.1:${closed}`, HA_URL: `http://127.0.0.1:${closed}`, MQTT_URL: `mqtt://127.0.0.1:${closed}` }),
      { envFile: undefined, timeoutMs: 3000 },
    );
    expect(finding(report, 'LLM')).toEqual({
      state: 'problem',
      label: 'LLM',
      detail: `ollama at http://127.0.0.1:${closed}, model fake:latest: Cannot reach Ollama at http://127.0.0.1:${closed} (ECONNREFUSED). Start Ollama (\`ollama serve\`) or set OLLAMA_HOST.`,
    });
    expect(finding(report, 'Home Assistant')).toEqual({ state: 'problem', label: 'Home Assistant', detail: `cannot reach http://127.0.0.1:${closed} (ECONNREFUSED)` });
    expect(finding(report, 'MQTT')).toMatchObject({ state: 'problem', detail: expect.stringMatching(new RegExp(`^cannot connect to mqtt://127.0.0.1:${closed} \\(.*ECONNREFUSED`)) });
    expect(report.problems).toBeGreaterThanOrEqual(3);
    expect(formatDoctorReport(report)).toMatch(/\n {2}✗ LLM {13}ollama at .*\n.*problems? found \(✗\)\.\n$/s);
  });

  it("reads the database's schema and whether a Hearth holds DATA_DIR", async () => {
    const databaseFile = path.join(folder, 'data', 'hearth.db');
    await (await openDatabase(databaseFile)).destroy();
    let report = await runDoctor(configWith(), { envFile: undefined });
    expect(finding(report, 'database')?.detail).toBe(`${databaseFile}: schema up to date`);
    expect(finding(report, 'running')?.detail).toBe('no Hearth runs on this DATA_DIR now');

    const older = path.join(folder, 'older.db');
    const db = new Kysely<any>({ dialect: new SqliteDialect({ database: new SqliteDatabase(older) }) });
    await migratorFor(db).migrateTo(migrationNames.at(-3)!);
    await db.destroy();
    await copyFile(older, databaseFile);
    for (const suffix of ['-wal', '-shm']) await rm(databaseFile + suffix, { force: true });
    const held = acquireInstanceLock(path.join(folder, 'data'));
    if (!held.ok) throw new Error(held.message);
    try {
      report = await runDoctor(configWith(), { envFile: path.join(folder, '.env') });
    } finally {
      held.lock.release();
    }
    expect(finding(report, 'database')?.detail).toBe(`${databaseFile}: 2 migrations to run at the next start (backed up first)`);
    expect(finding(report, 'running')?.detail).toBe('yes: a Hearth holds this DATA_DIR');
    expect(finding(report, 'settings')).toMatchObject({ state: 'ok', detail: `${path.join(folder, '.env')}, beneath the environment` });
  });
});
