import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import { Kysely, SqliteDialect } from 'kysely';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/store/database.ts';
import { migrationNames, migratorFor } from '../../src/store/migrations/index.ts';

// An install from before people: one session with its messages, a schedule, a notification, and
// an approval the person decided. After the upgrade all of it is the first owner's, and nothing
// else changed.
const lastBeforePeople = '2026-11-28-sessions-of-schedules';
const at = '2026-11-27T10:00:00.000Z';

let folder: string;
beforeEach(async () => {
  folder = await mkdtemp(path.join(tmpdir(), 'hearth-people-migration-'));
});
afterEach(async () => {
  await rm(folder, { recursive: true, force: true });
});

async function installFromBeforePeople(file: string): Promise<void> {
  const db = new Kysely<any>({ dialect: new SqliteDialect({ database: new SqliteDatabase(file) }) });
  try {
    expect((await migratorFor(db).migrateTo(lastBeforePeople)).error).toBeUndefined();
    await db
      .insertInto('sessions')
      .values({ id: 's1', title: 'Disk space', title_set_by_user: 1, profile_id: 'server_admin', pinned: 1, context_tokens: 120, created_at: at, last_active: at, origin: null, model: null })
      .execute();
    for (const [position, role, content] of [
      [0, 'user', 'How full is the disk?'],
      [1, 'assistant', 'It is 41% full.'],
    ] as const) {
      await db.insertInto('messages').values({ session_id: 's1', buffer: 'display', position, role, content, details: '{}', created_at: at }).execute();
    }
    await db
      .insertInto('schedules')
      .values({ id: 'daily', name: 'Morning check', prompt: 'Check the disk', cron: '0 9 * * *', every_ms: null, at: null, timezone: 'UTC', profile_id: 'server_admin', enabled: 1, created_at: at, next_run_at: null, last_run_at: null, last_status: null })
      .execute();
    await db.insertInto('notifications').values({ title: 'Morning check finished', body: 'All fine', session_id: 's1', created_at: at, read_at: null }).execute();
    await db
      .insertInto('approvals')
      .values({ session_id: 's1', call_id: 'c1', tool: 'terminal', subject: 'df -h', rule: 'default', is_subagent: 0, decision: 'allow', decided_by: 'user', remember: '', requested_at: at, expires_at: null, decided_at: at })
      .execute();
  } finally {
    await db.destroy();
  }
}

describe('the people migration', () => {
  it("gives an install's sessions, schedules, notifications and approvals to the one owner it makes, losing nothing", async () => {
    const file = path.join(folder, 'hearth.db');
    await installFromBeforePeople(file);
    const db = await openDatabase(file);
    try {
      const people = await db.selectFrom('people').selectAll().execute();
      expect(people).toHaveLength(1);
      const owner = people[0]!;
      expect(owner).toMatchObject({ name: 'Owner', role: 'owner', passphrase_hash: null });

      expect(await db.selectFrom('sessions').selectAll().execute()).toEqual([
        expect.objectContaining({ id: 's1', title: 'Disk space', pinned: 1, context_tokens: 120, person_id: owner.id, shared: 0 }),
      ]);
      expect((await db.selectFrom('messages').select(['position', 'content']).orderBy('position').execute()).map((row) => row.content)).toEqual([
        'How full is the disk?',
        'It is 41% full.',
      ]);
      expect(await db.selectFrom('schedules').select(['id', 'person_id']).execute()).toEqual([{ id: 'daily', person_id: owner.id }]);
      expect(await db.selectFrom('notifications').select(['title', 'person_id']).execute()).toEqual([{ title: 'Morning check finished', person_id: owner.id }]);
      expect(await db.selectFrom('approvals').select(['call_id', 'decision', 'asked_by', 'decider_id']).execute()).toEqual([
        { call_id: 'c1', decision: 'allow', asked_by: owner.id, decider_id: owner.id },
      ]);
    } finally {
      await db.destroy();
    }
  });

  it('lists the migrations in the order Kysely runs them, so an install that ran some never refuses a new one', () => {
    expect([...migrationNames]).toEqual([...migrationNames].sort());
  });
});
