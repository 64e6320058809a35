// SessionService on an in-memory database with a fake AgentRuns: a session's whole life (keys,
// delete, profile switch, files, decisions) without a server, and the migration that moved the
// scheduler's sessions into session_keys.
import { once } from 'node:events';
import { access, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import { Kysely, SqliteDialect } from 'kysely';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { AgentRuns } from '../../src/agent/agent-runs.ts';
import type { Decision, DecisionOutcome } from '../../src/agent/approval-gate.ts';
import { Household } from '../../src/household/household.ts';
import type { HearthEvent } from '../../src/events/hearth-events.ts';
import { createLogger } from '../../src/logger.ts';
import { ProfileRegistry } from '../../src/profiles/profile-registry.ts';
import type { AgentEvent } from '../../src/protocol/events.ts';
import { Scheduler, type RunFinished } from '../../src/scheduler/scheduler.ts';
import { SessionService } from '../../src/sessions/session-service.ts';
import { openDatabase, type Db } from '../../src/store/database.ts';
import { MessageImages } from '../../src/store/message-images.ts';
import { appendMessage, listMessages } from '../../src/store/messages-repository.ts';
import { migratorFor } from '../../src/store/migrations/index.ts';
import { insertPerson } from '../../src/store/people-repository.ts';
import { ManualClock } from '../support/manual-clock.ts';

const profile = (id: string, name: string) => `---
id: ${id}
name: ${name}
description: A profile.
---
Answer.
`;

/** The runs as the service sees them, recording what it asked of them. */
class FakeRuns implements AgentRuns {
  readonly sent: string[] = [];
  readonly forgotten: string[] = [];
  readonly told: Array<{ sessionId: string; event: AgentEvent }> = [];
  /** Whether the session's row still existed when forget was asked: the runs must stop before the rows go. */
  readonly rowAtForget: boolean[] = [];
  lookUp: (sessionId: string) => Promise<unknown> = async () => undefined;

  send(sessionId: string) {
    this.sent.push(sessionId);
    return { ok: true, outcome: Promise.resolve({ status: 'completed', content: 'Done.', contextTokens: 1 } as const) } as const;
  }
  regenerate(sessionId: string) {
    return this.send(sessionId);
  }
  edit(sessionId: string) {
    return this.send(sessionId);
  }
  stop() {
    return false;
  }
  async whenIdle() {}
  isRunning() {
    return false;
  }
  subscribe() {
    return () => {};
  }
  async forget(sessionId: string) {
    this.rowAtForget.push((await this.lookUp(sessionId)) !== undefined);
    this.forgotten.push(sessionId);
  }
  tell(sessionId: string, event: AgentEvent) {
    this.told.push({ sessionId, event });
  }
}

let folder: string;
let db: Db;
let runs: FakeRuns;
let published: HearthEvent[];
let decisions: Array<{ sessionId: string; callId: string; decision: Decision }>;
let images: MessageImages;
let service: SessionService;

beforeEach(async () => {
  folder = await mkdtemp(path.join(tmpdir(), 'hearth-session-service-'));
  await writeFile(path.join(folder, 'secretary.md'), profile('secretary', 'Secretary'));
  await writeFile(path.join(folder, 'guarded.md'), profile('guarded', 'Guarded'));
  db = await openDatabase(':memory:');
  runs = new FakeRuns();
  published = [];
  decisions = [];
  images = new MessageImages(path.join(folder, 'images'));
  service = new SessionService({
    db,
    profiles: await ProfileRegistry.open(folder),
    runs,
    approvals: {
      // The gate's answer by call id: `waiting` is decided, `not-yours` refused (Ada may), anything else waits nowhere.
      decide: (sessionId, callId, decision): DecisionOutcome => {
        decisions.push({ sessionId, callId, decision });
        if (callId === 'waiting') return { decided: true };
        if (callId === 'not-yours') return { decided: false, reason: 'forbidden', deciders: [{ id: 'ada', name: 'Ada' }] };
        return { decided: false, reason: 'not_found' };
      },
      mayDecide: () => undefined,
      pendingFor: () => [],
      on: () => {},
    },
    household: new Household(db),
    filesDirectory: path.join(folder, 'session-files'),
    images,
    events: { publish: (event) => published.push(event) },
  });
  runs.lookUp = (sessionId) => service.find(sessionId);
});

afterEach(async () => {
  await db.destroy();
  await rm(folder, { recursive: true, force: true });
});

async function created(): Promise<string> {
  const result = await service.create();
  if (!result.ok) throw new Error(result.message);
  return result.session.id;
}

async function foundOrCreated(key: string): Promise<string> {
  const result = await service.findOrCreate(key, { origin: 'telegram' });
  if (!result.ok) throw new Error(result.message);
  return result.session.id;
}

const exists = (file: string) => access(file).then(() => true, () => false);

describe('findOrCreate', () => {
  it('finds the session a key leads to, the one it was bound to after a rebind, and a new one once that is deleted', async () => {
    const first = await foundOrCreated('telegram:1');
    expect(await foundOrCreated('telegram:1')).toBe(first);
    expect((await service.find(first))!.origin).toBe('telegram');

    const other = await created();
    await service.bindKey('telegram:1', other);
    expect(await foundOrCreated('telegram:1')).toBe(other);

    expect(await service.delete(other)).toBe(true);
    expect(await service.findByKey('telegram:1')).toBeUndefined();
    const remade = await foundOrCreated('telegram:1');
    expect([first, other]).not.toContain(remade);
    expect(await foundOrCreated('telegram:1')).toBe(remade);

    await service.unbindKey('telegram:1');
    expect(await service.findByKey('telegram:1')).toBeUndefined();
  });

  it('refuses an unknown profile with the known ones named, and makes nothing', async () => {
    expect(await service.findOrCreate('telegram:2', { profileId: 'nope' })).toEqual({
      ok: false,
      code: 'unknown_profile',
      message: 'Unknown profile "nope". Known profiles: guarded, secretary.',
    });
    expect(await service.list()).toEqual([]);
  });
});

describe('delete', () => {
  it('asks the runs to forget the session first, then removes its rows, files folder and images folder', async () => {
    const sessionId = await created();
    await appendMessage(db, sessionId, { role: 'user', content: 'hello' });
    const [saved] = await service.attachFiles(sessionId, [{ name: 'notes.txt', data: Buffer.from('notes') }]);
    const [image] = await images.save(sessionId, [Buffer.from('GIF89a').toString('base64')]);
    const filesFolder = path.dirname(saved!.path);
    const imageFile = images.locate(sessionId, image!.slice('image:'.length))!.file;
    expect(await exists(filesFolder)).toBe(true);
    expect(await exists(imageFile)).toBe(true);

    expect(await service.delete(sessionId)).toBe(true);
    expect(runs.forgotten).toEqual([sessionId]);
    expect(runs.rowAtForget).toEqual([true]);
    expect(await service.find(sessionId)).toBeUndefined();
    expect(await listMessages(db, sessionId, 'display')).toEqual([]);
    expect(await exists(filesFolder)).toBe(false);
    expect(await exists(path.dirname(imageFile))).toBe(false);
    expect(published).toEqual([{ type: 'sessions_changed', session_id: sessionId, change: 'deleted' }]);

    // Nothing left to delete: still forgotten (a run may hold it), not announced again.
    expect(await service.delete(sessionId)).toBe(false);
    expect(published).toHaveLength(1);
  });
});

describe('switchProfile', () => {
  it('writes exactly one marker and tells exactly one profile_switched; the same profile again writes nothing', async () => {
    const sessionId = await created();
    await appendMessage(db, sessionId, { role: 'user', content: 'hello' });

    const switched = await service.switchProfile(sessionId, 'guarded', 'agent');
    expect(switched).toMatchObject({ ok: true, switched: true, session: { id: sessionId, profileId: 'guarded' } });
    const markers = (await listMessages(db, sessionId, 'display')).filter((message) => message.profile_switch);
    expect(markers.map((marker) => marker.profile_switch)).toEqual([{ profile_id: 'guarded', profile_name: 'Guarded', by: 'agent' }]);
    expect(runs.told).toEqual([{ sessionId, event: { type: 'profile_switched', profile_id: 'guarded', profile_name: 'Guarded' } }]);
    expect(published).toEqual([{ type: 'sessions_changed', session_id: sessionId, change: 'updated' }]);

    expect(await service.switchProfile(sessionId, 'guarded', 'user')).toMatchObject({ ok: true, switched: false });
    expect((await listMessages(db, sessionId, 'display')).filter((message) => message.profile_switch)).toHaveLength(1);
    expect(runs.told).toHaveLength(1);
  });

  it('through update, with the title and pin, makes one marker, one event and one announcement', async () => {
    const sessionId = await created();
    await appendMessage(db, sessionId, { role: 'user', content: 'hello' });
    const updated = await service.update(sessionId, { title: '  Garden  ', pinned: true, profileId: 'guarded' });
    expect(updated).toMatchObject({ ok: true, session: { title: 'Garden', titleSetByUser: true, pinned: true, profileId: 'guarded' } });
    const markers = (await listMessages(db, sessionId, 'display')).filter((message) => message.profile_switch);
    expect(markers.map((marker) => marker.profile_switch!.by)).toEqual(['user']);
    expect(runs.told).toHaveLength(1);
    expect(published).toEqual([{ type: 'sessions_changed', session_id: sessionId, change: 'updated' }]);
  });

  it('refuses an unknown profile or session with the one wording, and changes nothing', async () => {
    const sessionId = await created();
    const refused = { ok: false, code: 'unknown_profile', message: 'Unknown profile "nope". Known profiles: guarded, secretary.' };
    expect(await service.switchProfile(sessionId, 'nope', 'user')).toEqual(refused);
    expect(await service.update(sessionId, { title: 'Kept?', profileId: 'nope' })).toEqual(refused);
    expect((await service.find(sessionId))!.title).toBe('');
    expect(await service.switchProfile('gone', 'guarded', 'user')).toEqual({ ok: false, code: 'session_not_found', message: 'No session with id gone.' });
    expect(runs.told).toEqual([]);
    expect(published).toEqual([]);
  });
});

describe('attachFiles', () => {
  it("saves each file in the session's folder under a safe, unused name: what the model is told", async () => {
    const sessionId = await created();
    const saved = await service.attachFiles(sessionId, [
      { name: 'notes.txt', data: Buffer.from('first') },
      { name: 'notes.txt', data: Buffer.from('second') },
      { name: '../../etc/passwd', data: Buffer.from('third') },
    ]);
    const sessionFolder = path.join(folder, 'session-files', sessionId);
    expect(saved.map(({ name, path: file }) => ({ name, file }))).toEqual([
      { name: 'notes.txt', file: path.join(sessionFolder, 'notes.txt') },
      { name: 'notes (1).txt', file: path.join(sessionFolder, 'notes (1).txt') },
      { name: 'passwd', file: path.join(sessionFolder, 'passwd') },
    ]);
    expect(await Promise.all(saved.map((file) => readFile(file.path, 'utf8')))).toEqual(['first', 'second', 'third']);
  });
});

describe('decide', () => {
  it('passes the decision on to the approvals, and their answer back', async () => {
    const owner = await new Household(db).firstOwner();
    const sessionId = await created();
    const decision: Decision = { decision: 'allow', remember: 'session', via: 'telegram', decider: owner };
    expect(await service.decide(sessionId, 'waiting', decision)).toEqual({ ok: true });
    expect(await service.decide(sessionId, 'nothing', { decision: 'deny', via: 'rest', decider: owner })).toMatchObject({ ok: false, code: 'approval_not_found' });
    expect(decisions).toEqual([
      { sessionId, callId: 'waiting', decision },
      { sessionId, callId: 'nothing', decision: { decision: 'deny', via: 'rest', decider: owner } },
    ]);
  });

  it("answers a refusal on one's own session `forbidden` naming who may, and on another's `session_not_found`, as for a missing one", async () => {
    const child = await insertPerson(db, { name: 'Tom', role: 'child', passphraseHash: null });
    const adult = await insertPerson(db, { name: 'Bea', role: 'adult', passphraseHash: null });
    const sessionId = await created();
    await db.updateTable('sessions').set({ person_id: child.id }).where('id', '=', sessionId).execute();
    expect(await service.decide(sessionId, 'not-yours', { decision: 'allow', via: 'page', decider: child })).toEqual({
      ok: false,
      code: 'forbidden',
      message: 'You may not decide this call; Ada may.',
    });
    expect(await service.decide(sessionId, 'not-yours', { decision: 'allow', via: 'rest', decider: adult })).toMatchObject({ ok: false, code: 'session_not_found' });
    expect(await service.decide(sessionId, 'nothing', { decision: 'allow', via: 'rest', decider: adult })).toMatchObject({ ok: false, code: 'session_not_found' });
    expect(await service.decide('no-such-session', 'nothing', { decision: 'allow', via: 'rest', decider: adult })).toMatchObject({ ok: false, code: 'session_not_found' });
    // Shared with the household, the session is the adult's to see: the refusal says who may.
    await db.updateTable('sessions').set({ shared: 1 }).where('id', '=', sessionId).execute();
    expect(await service.decide(sessionId, 'not-yours', { decision: 'allow', via: 'rest', decider: adult })).toMatchObject({ ok: false, code: 'forbidden' });
    expect(await service.personOf(sessionId)).toEqual(child);
    expect(await service.personOf('no-such-session')).toBeUndefined();
  });
});

describe("the migration of the scheduler's sessions into session_keys", () => {
  it('copies each schedule\'s session to its key `schedule:<id>`, skips a deleted one, and the scheduler finds it after a restart', async () => {
    const file = path.join(folder, 'hearth.db');
    const before = new Kysely<any>({ dialect: new SqliteDialect({ database: new SqliteDatabase(file) }) });
    expect((await migratorFor(before).migrateTo('2026-11-28-session-model')).error).toBeUndefined();
    const at = '2026-11-28T08:00:00.000Z';
    await before
      .insertInto('sessions')
      .values({ id: 'kept', title: 'Backups', title_set_by_user: 1, profile_id: 'secretary', pinned: 0, context_tokens: 0, created_at: at, last_active: at, origin: null, model: null })
      .execute();
    const schedule = (id: string, sessionId: string | null) => ({
      id, name: id, prompt: 'Check', cron: '0 9 * * *', every_ms: null, at: null, timezone: 'UTC', profile_id: 'secretary', session_id: sessionId,
      enabled: 1, created_at: at, next_run_at: '2026-11-29T09:00:00.000Z', last_run_at: null, last_status: null,
    });
    await before.insertInto('schedules').values([schedule('backups', 'kept'), schedule('fresh', null), schedule('orphan', 'deleted-session')]).execute();
    await before.destroy();

    const after = await openDatabase(file);
    try {
      expect(await after.selectFrom('session_keys').selectAll().orderBy('key').execute()).toEqual([{ key: 'schedule:backups', session_id: 'kept' }]);
      const columns = await after.introspection.getTables().then((tables) => tables.find((table) => table.name === 'schedules')!.columns.map((column) => column.name));
      expect(columns).not.toContain('session_id');

      const sessions = new SessionService({ db: after, profiles: await ProfileRegistry.open(folder), runs, approvals: { decide: () => ({ decided: false, reason: 'not_found' }), mayDecide: () => undefined, pendingFor: () => [], on: () => {} }, household: new Household(after), filesDirectory: folder, images, events: { publish: () => {} } });
      const scheduler = new Scheduler({ db: after, sessions, clock: new ManualClock(at), defaultTimezone: () => 'UTC', logger: createLogger('silent'), maxConcurrentRuns: 1 });
      await scheduler.start();
      scheduler.stop();
      expect(Object.fromEntries(scheduler.list().map((loaded) => [loaded.id, loaded.sessionId]))).toEqual({ backups: 'kept', fresh: null, orphan: null });
    } finally {
      await after.destroy();
    }
  });
});

describe("the scheduler's sessions", () => {
  const clock = () => new ManualClock('2026-11-28T08:00:00.000Z');
  const schedulerOn = (sessions: SessionService) =>
    new Scheduler({ db, sessions, clock: clock(), defaultTimezone: () => 'UTC', logger: createLogger('silent'), maxConcurrentRuns: 1 });
  const ran = async (scheduler: Scheduler, id: string) => {
    const finished = once(scheduler, 'run_finished').then(([event]) => event as RunFinished);
    expect(scheduler.runNow(id)).toBe(true);
    return finished;
  };

  it('are found by the key schedule:<id>: made on the first run, kept across a restart, and let go with the schedule', async () => {
    const first = schedulerOn(service);
    await first.start();
    const created = await first.create({ name: 'Backups', prompt: 'Check the backups', cron: '0 9 * * *' });
    if (!created.ok) throw new Error(created.message);
    const { id } = created.value;
    const run = await ran(first, id);
    expect(run).toMatchObject({ status: 'ok', sessionId: expect.any(String) });
    expect((await service.findByKey(`schedule:${id}`))!).toMatchObject({ id: run.sessionId, title: 'Backups' });
    first.stop();

    const restarted = schedulerOn(service);
    await restarted.start();
    expect(restarted.get(id)!.sessionId).toBe(run.sessionId);
    expect((await ran(restarted, id)).sessionId).toBe(run.sessionId);
    expect(runs.sent).toEqual([run.sessionId, run.sessionId]);

    await restarted.remove(id);
    restarted.stop();
    expect(await service.findByKey(`schedule:${id}`)).toBeUndefined();
  });

  it('follow the session the person names, and a new one once they name none', async () => {
    const scheduler = schedulerOn(service);
    await scheduler.start();
    const named = await created();
    const schedule = await scheduler.create({ name: 'Backups', prompt: 'Check', every: '1h', session_id: named });
    if (!schedule.ok) throw new Error(schedule.message);
    expect((await ran(scheduler, schedule.value.id)).sessionId).toBe(named);

    const unnamed = await scheduler.update(schedule.value.id, { session_id: null });
    expect(unnamed).toMatchObject({ ok: true, value: { sessionId: null } });
    const fresh = (await ran(scheduler, schedule.value.id)).sessionId;
    expect(fresh).not.toBe(named);
    expect((await service.findByKey(`schedule:${schedule.value.id}`))!.id).toBe(fresh);
    scheduler.stop();
  });
});
