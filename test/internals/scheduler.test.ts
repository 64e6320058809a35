// The Scheduler alone: an in-memory database, a clock the test moves, and sessions played in memory
// that record each turn asked for and answer with scripted outcomes. Its times (cron, every, at,
// across DST), its runs and their statuses, its sessions, restarts, changes and refusals.
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import { Kysely, SqliteDialect } from 'kysely';
import { afterEach, beforeEach, describe, expect, it, onTestFinished } from 'vitest';
import { HearthEventHub, type HearthEvent } from '../../src/events/hearth-events.ts';
import { Notifications } from '../../src/events/notifications.ts';
import { createLogger } from '../../src/logger.ts';
import { notifyFinishedRuns } from '../../src/scheduler/run-notifications.ts';
import { Scheduler, type RunFinished } from '../../src/scheduler/scheduler.ts';
import { openDatabase, type Db } from '../../src/store/database.ts';
import { migratorFor } from '../../src/store/migrations/index.ts';
import { insertPerson, listPeople } from '../../src/store/people-repository.ts';
import { listNotifications } from '../../src/store/notifications-repository.ts';
import { listScheduleRuns, listSchedules, type Schedule } from '../../src/store/schedules-repository.ts';
import type { ScheduleFields } from '../../src/time/schedule-input.ts';
import { ManualClock } from '../support/manual-clock.ts';
import { completed, failed, ScriptedSessions, stopped } from '../support/scripted-sessions.ts';

const zone = 'Europe/Berlin';
const morning = { name: 'Morning', prompt: 'Say good morning', timezone: zone };

let db: Db;
let sessions: ScriptedSessions;
let clock: ManualClock;
const schedulers: Scheduler[] = [];

beforeEach(async () => {
  db = await openDatabase(':memory:');
  sessions = new ScriptedSessions(db);
  clock = new ManualClock('2026-11-24T07:00:00Z');
});

afterEach(async () => {
  for (const scheduler of schedulers.splice(0)) {
    scheduler.stop();
    await scheduler.settled();
  }
  await db.destroy();
});

interface Built {
  at?: string;
  maxConcurrentRuns?: number;
  defaultTimezone?: () => string;
}

/** A scheduler on this test's database, sessions and clock, not yet started. */
function built(options: Built = {}): Scheduler {
  if (options.at !== undefined) clock.advanceTo(options.at);
  const scheduler = new Scheduler({
    db,
    sessions,
    clock,
    defaultTimezone: options.defaultTimezone ?? (() => 'UTC'),
    logger: createLogger('silent'),
    maxConcurrentRuns: options.maxConcurrentRuns ?? 1,
  });
  schedulers.push(scheduler);
  return scheduler;
}

/** Started, which runs what fell due. */
async function started(options: Built = {}): Promise<Scheduler> {
  const scheduler = built(options);
  await scheduler.start();
  return scheduler;
}

async function create(scheduler: Scheduler, fields: ScheduleFields): Promise<Schedule> {
  const created = await scheduler.create({ ...morning, ...fields });
  if (!created.ok) throw new Error(created.message);
  return created.value;
}

function nextFinish(scheduler: Scheduler): Promise<RunFinished> {
  return once(scheduler, 'run_finished').then(([finished]) => finished as RunFinished);
}

const instants = (dates: Date[]) => dates.map((date) => date.toISOString());
const runsOf = async (scheduleId: string) => (await listScheduleRuns(db, scheduleId)).map((run) => [run.status, run.sessionId, run.error]);

describe('times', () => {
  it('a daily cron fires at 09:00 local on each side of the spring DST change, in one session titled with its name', async () => {
    const scheduler = await started({ at: '2026-03-28T07:00:00Z' });
    const preview = scheduler.preview({ cron: '0 9 * * *', timezone: zone });
    expect(preview.ok && { ...preview.value, nextRuns: instants(preview.value.nextRuns) }).toEqual({
      timezone: zone,
      nextRuns: ['2026-03-28T08:00:00.000Z', '2026-03-29T07:00:00.000Z', '2026-03-30T07:00:00.000Z'],
    });
    const schedule = await create(scheduler, { cron: '0 9 * * *' });
    expect(schedule).toMatchObject({ timing: { cron: '0 9 * * *' }, timezone: zone, profileId: 'secretary', enabled: true, nextRunAt: '2026-03-28T08:00:00.000Z', sessionId: null });
    expect(clock.nextTimer()).toBe('2026-03-28T08:00:00.000Z');

    let finished = nextFinish(scheduler);
    clock.advanceTo('2026-03-28T08:00:00Z');
    expect((await finished).status).toBe('ok');
    expect(clock.nextTimer()).toBe('2026-03-29T07:00:00.000Z');

    finished = nextFinish(scheduler);
    clock.advanceTo('2026-03-29T07:00:00Z');
    const second = await finished;
    expect(second).toEqual({ scheduleId: schedule.id, personId: schedule.personId, status: 'ok', sessionId: expect.any(String) });

    const prompt = { content: 'Say good morning', scheduleId: schedule.id, unattended: true };
    expect(sessions.turns).toEqual([
      { sessionId: second.sessionId, input: prompt, how: 'sendWhenIdle' },
      { sessionId: second.sessionId, input: prompt, how: 'sendWhenIdle' },
    ]);
    expect(sessions.made).toEqual([{ key: `schedule:${schedule.id}`, request: { profileId: 'secretary', title: 'Morning', personId: schedule.personId } }]);
    expect(await runsOf(schedule.id)).toEqual([
      ['ok', second.sessionId, null],
      ['ok', second.sessionId, null],
    ]);
    expect(scheduler.get(schedule.id)).toMatchObject({ lastRunAt: '2026-03-29T07:00:00.000Z', lastStatus: 'ok', sessionId: second.sessionId, nextRunAt: '2026-03-30T07:00:00.000Z' });
  });

  it('every 1h keeps whole hours of real time through the change, and at fires once then disables itself', async () => {
    const scheduler = await started({ at: '2026-03-29T00:30:00Z' });
    const preview = scheduler.preview({ every: '1h', timezone: zone });
    expect(preview.ok && instants(preview.value.nextRuns)).toEqual(['2026-03-29T01:30:00.000Z', '2026-03-29T02:30:00.000Z', '2026-03-29T03:30:00.000Z']);
    const hourly = await create(scheduler, { every: '1h' });
    const reminder = await create(scheduler, { name: 'Plumber', at: '2026-03-29T03:15:00+02:00' });
    expect(reminder).toMatchObject({ timing: { at: '2026-03-29T03:15:00+02:00' }, nextRunAt: '2026-03-29T01:15:00.000Z' });

    let finished = nextFinish(scheduler);
    clock.advanceTo('2026-03-29T01:15:00Z');
    expect(await finished).toMatchObject({ scheduleId: reminder.id, status: 'ok' });
    expect(scheduler.get(reminder.id)).toMatchObject({ enabled: false, nextRunAt: null, lastStatus: 'ok' });
    expect((await listSchedules(db)).find((stored) => stored.id === reminder.id)).toMatchObject({ enabled: false, nextRunAt: null });
    expect(clock.nextTimer()).toBe('2026-03-29T01:30:00.000Z');

    finished = nextFinish(scheduler);
    clock.advanceTo('2026-03-29T01:30:00Z');
    expect(await finished).toMatchObject({ scheduleId: hourly.id, status: 'ok' });
    expect(clock.nextTimer()).toBe('2026-03-29T02:30:00.000Z');
    expect(sessions.turns.map((turn) => turn.input.content)).toEqual(['Say good morning', 'Say good morning']);
    expect(await runsOf(reminder.id)).toHaveLength(1);
  });

  it("a daily 02:30 fires once in the autumn's repeated hour", async () => {
    const scheduler = await started({ at: '2026-10-24T12:00:00Z' });
    const autumn = await create(scheduler, { cron: '30 2 * * *' });
    expect(autumn.nextRunAt).toBe('2026-10-25T00:30:00.000Z');
    const finished = nextFinish(scheduler);
    clock.advanceTo('2026-10-25T00:30:00Z');
    await finished;
    // 02:30 comes round again an hour later (now at +01:00); the next run is the next day's.
    expect(clock.nextTimer()).toBe('2026-10-26T01:30:00.000Z');
    clock.advanceTo('2026-10-25T01:30:00Z');
    expect(sessions.turns).toHaveLength(1);
  });

  it('a daily 02:30 fires at 03:00 on the spring day that has no 02:30, and at 02:30 again the day after', async () => {
    const scheduler = await started({ at: '2026-03-28T12:00:00Z' });
    const schedule = await create(scheduler, { cron: '30 2 * * *' });
    expect(schedule.nextRunAt).toBe('2026-03-29T01:00:00.000Z');
    const finished = nextFinish(scheduler);
    clock.advanceTo('2026-03-29T01:00:00Z');
    expect(await finished).toMatchObject({ status: 'ok' });
    expect(clock.nextTimer()).toBe('2026-03-30T00:30:00.000Z');
  });

  it('a schedule without a zone takes the default zone asked at that moment (SCHEDULER_TIMEZONE, else the server\'s)', async () => {
    let defaultZone = 'Asia/Tokyo';
    const scheduler = await started({ defaultTimezone: () => defaultZone });
    const preview = scheduler.preview({ cron: '0 9 * * *' });
    expect(preview.ok && { ...preview.value, nextRuns: instants(preview.value.nextRuns) }).toEqual({
      timezone: 'Asia/Tokyo',
      nextRuns: ['2026-11-25T00:00:00.000Z', '2026-11-26T00:00:00.000Z', '2026-11-27T00:00:00.000Z'],
    });
    expect(await create(scheduler, { timezone: undefined, cron: '0 9 * * *' })).toMatchObject({ timezone: 'Asia/Tokyo', nextRunAt: '2026-11-25T00:00:00.000Z' });
    defaultZone = 'America/New_York';
    expect(await create(scheduler, { timezone: undefined, cron: '0 9 * * *' })).toMatchObject({ timezone: 'America/New_York', nextRunAt: '2026-11-24T14:00:00.000Z' });
    expect(scheduler.defaultTimezone).toBe('America/New_York');
  });
});

describe('runs', () => {
  it('each run is recorded with its outcome: ok, error with the reason, stopped, and error when the turn throws', async () => {
    const scheduler = await started();
    const schedule = await create(scheduler, { cron: '0 9 * * *' });
    sessions.answer(completed('Good morning!'), failed('model crashed'), stopped, new Error('the database is gone'));
    const ran = async () => {
      const finished = nextFinish(scheduler);
      expect(scheduler.runNow(schedule.id)).toBe(true);
      return finished;
    };
    const first = await ran();
    expect(first).toEqual({ scheduleId: schedule.id, personId: schedule.personId, status: 'ok', sessionId: expect.any(String) });
    const { sessionId } = first;
    expect(await ran()).toEqual({ scheduleId: schedule.id, personId: schedule.personId, status: 'error', sessionId, error: 'model crashed' });
    expect(scheduler.get(schedule.id)!.lastStatus).toBe('error');
    expect(await ran()).toEqual({ scheduleId: schedule.id, personId: schedule.personId, status: 'stopped', sessionId });
    expect(await ran()).toEqual({ scheduleId: schedule.id, personId: schedule.personId, status: 'error', sessionId, error: 'the database is gone' });
    expect(await runsOf(schedule.id)).toEqual([
      ['error', sessionId, 'the database is gone'],
      ['stopped', sessionId, null],
      ['error', sessionId, 'model crashed'],
      ['ok', sessionId, null],
    ]);
    expect(scheduler.get(schedule.id)).toMatchObject({ lastStatus: 'error', lastRunAt: '2026-11-24T07:00:00.000Z' });
    expect(scheduler.runNow('nope')).toBe(false);
  });

  it('a run that cannot get its session (its profile is gone) is recorded as an error saying why', async () => {
    const scheduler = await started();
    const schedule = await create(scheduler, { every: '1h', profile_id: 'guarded' });
    sessions.profileIds.delete('guarded');
    const finished = nextFinish(scheduler);
    scheduler.runNow(schedule.id);
    expect(await finished).toEqual({ scheduleId: schedule.id, personId: schedule.personId, status: 'error', sessionId: null, error: 'Unknown profile "guarded".' });
    expect(await runsOf(schedule.id)).toEqual([['error', null, 'Unknown profile "guarded".']]);
    expect(sessions.turns).toEqual([]);
  });

  it('keeps one session, found again by the key schedule:<id>, across restarts, and makes a new one once the person deletes it', async () => {
    const first = await started();
    const schedule = await create(first, { every: '1h' });
    let finished = nextFinish(first);
    first.runNow(schedule.id);
    const { sessionId } = await finished;
    expect(sessions.keys.get(`schedule:${schedule.id}`)).toBe(sessionId);
    expect(first.get(schedule.id)!.sessionId).toBe(sessionId);
    finished = nextFinish(first);
    first.runNow(schedule.id);
    expect((await finished).sessionId).toBe(sessionId);
    first.stop();

    const restarted = await started();
    expect(restarted.get(schedule.id)!.sessionId).toBe(sessionId);
    await sessions.remove(sessionId!);
    finished = nextFinish(restarted);
    restarted.runNow(schedule.id);
    const remade = (await finished).sessionId;
    expect(remade).not.toBe(sessionId);
    expect(restarted.get(schedule.id)!.sessionId).toBe(remade);
    expect(sessions.made.map((made) => made.key)).toEqual([`schedule:${schedule.id}`, `schedule:${schedule.id}`]);
    expect(sessions.turns.map((turn) => turn.sessionId)).toEqual([sessionId, sessionId, remade]);
  });

  it('runs in the session the person names; one that does not exist is not kept, the first run makes one', async () => {
    const scheduler = await started();
    const named = await sessions.createSession();
    const schedule = await create(scheduler, { every: '1h', session_id: named });
    expect(sessions.keys.get(`schedule:${schedule.id}`)).toBe(named);
    let finished = nextFinish(scheduler);
    scheduler.runNow(schedule.id);
    expect((await finished).sessionId).toBe(named);
    expect(sessions.made).toEqual([]);

    expect(await scheduler.update(schedule.id, { session_id: 'no-such-session' })).toMatchObject({ ok: true });
    expect(sessions.keys.has(`schedule:${schedule.id}`)).toBe(false);
    finished = nextFinish(scheduler);
    scheduler.runNow(schedule.id);
    const made = (await finished).sessionId;
    expect(made).not.toBe(named);
    expect(sessions.keys.get(`schedule:${schedule.id}`)).toBe(made);
  });

  it('a run that is due while the previous one is still going is recorded skipped', async () => {
    const scheduler = await started();
    const schedule = await create(scheduler, { every: '1m' });
    const held = sessions.hold();
    clock.advanceTo('2026-11-24T07:01:00Z');
    await held.asked;
    const sessionId = scheduler.get(schedule.id)!.sessionId!;
    expect(sessionId).toEqual(expect.any(String));
    expect(scheduler.get(schedule.id)!.lastStatus).toBe('running');
    // Its first run: the session is made after the run is recorded, and written into it when the run ends.
    expect(await runsOf(schedule.id)).toEqual([['running', null, null]]);

    const skipped = nextFinish(scheduler);
    clock.advanceTo('2026-11-24T07:02:00Z');
    expect(await skipped).toEqual({ scheduleId: schedule.id, personId: schedule.personId, status: 'skipped', sessionId: null });
    expect(scheduler.get(schedule.id)!.lastStatus).toBe('skipped');

    const ended = nextFinish(scheduler);
    held.finish(stopped);
    expect(await ended).toMatchObject({ scheduleId: schedule.id, status: 'stopped', sessionId });
    expect((await runsOf(schedule.id)).map(([status]) => status)).toEqual(['skipped', 'stopped']);
    expect(sessions.turns).toHaveLength(1);
  });

  it("waits for the session's own turn to end instead of failing, and is running meanwhile", async () => {
    const scheduler = await started();
    const sessionId = await sessions.createSession();
    const personal = sessions.hold();
    const busy = sessions.send(sessionId, { content: 'a long question' });
    expect(busy.ok).toBe(true);
    await personal.asked;

    const schedule = await create(scheduler, { every: '5m', session_id: sessionId });
    const finished = nextFinish(scheduler);
    clock.advanceTo('2026-11-24T07:05:00Z');
    await sessions.requested(2);
    expect(await runsOf(schedule.id)).toEqual([['running', sessionId, null]]);
    expect(scheduler.get(schedule.id)!.lastStatus).toBe('running');
    expect(sessions.turns.map((turn) => turn.input.content)).toEqual(['a long question']);

    personal.finish(stopped);
    expect(await finished).toMatchObject({ status: 'ok', sessionId });
    expect(sessions.turns.map((turn) => [turn.input.content, turn.how])).toEqual([
      ['a long question', 'send'],
      ['Say good morning', 'sendWhenIdle'],
    ]);
    expect((await sessions.messages(sessionId)).filter((message) => message.role === 'user').map((message) => [message.content, message.scheduled ?? false])).toEqual([
      ['a long question', false],
      ['Say good morning', true],
    ]);
  });

  it('SCHEDULER_MAX_CONCURRENT: due runs wait as queued, in order; one still waiting when its schedule is removed or the scheduler stops never starts', async () => {
    const scheduler = await started({ maxConcurrentRuns: 1 });
    const [first, removed, second, last] = [
      await create(scheduler, { name: 'First', prompt: 'first', every: '1h' }),
      await create(scheduler, { name: 'Removed', prompt: 'removed', every: '1h' }),
      await create(scheduler, { name: 'Second', prompt: 'second', every: '1h' }),
      await create(scheduler, { name: 'Last', prompt: 'last', every: '1h' }),
    ];
    const heldFirst = sessions.hold();
    const heldSecond = sessions.hold();
    for (const schedule of [first, removed, second, last]) scheduler.runNow(schedule.id);
    await heldFirst.asked;
    expect(scheduler.list().map((schedule) => [schedule.name, schedule.lastStatus])).toEqual([
      ['First', 'running'],
      ['Removed', 'queued'],
      ['Second', 'queued'],
      ['Last', 'queued'],
    ]);
    // Next in line: let in once First ends, it finds its schedule gone and gives the place on at once.
    expect(await scheduler.remove(removed.id)).toBe(true);

    heldFirst.finish(completed());
    await heldSecond.asked;
    expect(scheduler.get(second.id)!.lastStatus).toBe('running');
    expect(scheduler.get(last.id)!.lastStatus).toBe('queued');
    scheduler.stop();
    heldSecond.finish(completed());
    await scheduler.settled();
    expect(sessions.turns.map((turn) => turn.input.content)).toEqual(['first', 'second']);
    expect(await runsOf(last.id)).toEqual([]);
    expect(await runsOf(first.id)).toHaveLength(1);
  });
});

describe('restarts', () => {
  it('after downtime a missed schedule runs once at start, counted on from its creation, and a restart keeps schedules and next runs', async () => {
    const first = await started();
    const schedule = await create(first, { every: '30m' });
    first.stop();

    // Three slots pass while the server is down.
    clock.advanceTo('2026-11-24T08:40:00Z');
    const second = built();
    const finished = nextFinish(second);
    await second.start();
    expect(await finished).toMatchObject({ scheduleId: schedule.id, status: 'ok' });
    expect((await runsOf(schedule.id)).map(([status]) => status)).toEqual(['ok']);
    expect(second.list()).toHaveLength(1);
    expect(second.get(schedule.id)).toMatchObject({ nextRunAt: '2026-11-24T09:00:00.000Z', lastStatus: 'ok', lastRunAt: '2026-11-24T08:40:00.000Z' });
    expect(clock.nextTimer()).toBe('2026-11-24T09:00:00.000Z');
    expect(sessions.turns).toHaveLength(1);
  });

  it('a run a crash cut off is closed as stopped at the next start', async () => {
    const crashed = await started();
    const schedule = await create(crashed, { cron: '0 9 * * *' });
    const held = sessions.hold();
    crashed.runNow(schedule.id);
    await held.asked;
    crashed.stop();

    const restarted = await started({ at: '2026-11-24T07:30:00Z' });
    expect(await listScheduleRuns(db, schedule.id)).toMatchObject([{ status: 'stopped', finishedAt: '2026-11-24T07:30:00.000Z', error: 'the server stopped during the run' }]);
    expect(restarted.get(schedule.id)!.lastStatus).toBe('stopped');
    held.finish(completed());
  });

  it("runs and schedules stored as 'failed' before the status was named 'error' read as 'error' after the migration", async () => {
    const folder = await mkdtemp(path.join(tmpdir(), 'hearth-scheduler-'));
    onTestFinished(() => rm(folder, { recursive: true, force: true }));
    const file = path.join(folder, 'hearth.db');
    const before = new Kysely<any>({ dialect: new SqliteDialect({ database: new SqliteDatabase(file) }) });
    expect((await migratorFor(before).migrateTo('2026-11-25-schedules')).error).toBeUndefined();
    const schedule = (id: string, lastStatus: string) => ({
      id, name: id, prompt: 'Check', cron: '0 9 * * *', every_ms: null, at: null, timezone: zone, profile_id: 'secretary', session_id: null,
      enabled: 1, created_at: '2026-11-24T06:00:00.000Z', next_run_at: '2026-11-25T08:00:00.000Z', last_run_at: '2026-11-24T06:30:00.000Z', last_status: lastStatus,
    });
    await before.insertInto('schedules').values([schedule('broken', 'failed'), schedule('fine', 'ok')]).execute();
    const run = (scheduleId: string, status: string, error: string | null) => ({
      schedule_id: scheduleId, started_at: '2026-11-24T06:30:00.000Z', finished_at: '2026-11-24T06:31:00.000Z', status, session_id: null, error,
    });
    await before.insertInto('schedule_runs').values([run('broken', 'failed', 'model crashed'), run('fine', 'ok', null), run('fine', 'skipped', 'the previous run was still going')]).execute();
    await before.destroy();

    await db.destroy();
    db = await openDatabase(file);
    sessions = new ScriptedSessions(db);
    const scheduler = await started();
    expect(Object.fromEntries(scheduler.list().map((stored) => [stored.id, stored.lastStatus]))).toEqual({ broken: 'error', fine: 'ok' });
    expect(await listScheduleRuns(db, 'broken')).toMatchObject([{ status: 'error', error: 'model crashed' }]);
    expect((await listScheduleRuns(db, 'fine')).map((stored) => stored.status)).toEqual(['skipped', 'ok']);
  });
});

describe('changes', () => {
  it('disabled it does not run; enabled again it counts on from its creation; new timing counts from now', async () => {
    const scheduler = await started();
    const schedule = await create(scheduler, { every: '1h' });
    expect(clock.nextTimer()).toBe('2026-11-24T08:00:00.000Z');
    expect(await scheduler.update(schedule.id, { enabled: false })).toMatchObject({ ok: true, value: { enabled: false, nextRunAt: null } });
    expect(clock.nextTimer()).toBeUndefined();
    clock.advanceTo('2026-11-24T08:30:00Z');
    expect(sessions.turns).toEqual([]);

    expect(await scheduler.update(schedule.id, { enabled: true })).toMatchObject({ ok: true, value: { enabled: true, nextRunAt: '2026-11-24T09:00:00.000Z' } });
    expect(await scheduler.update(schedule.id, { every: '2h' })).toMatchObject({ ok: true, value: { timing: { everyMs: 7_200_000 }, nextRunAt: '2026-11-24T10:30:00.000Z' } });
    expect(await scheduler.update(schedule.id, { prompt: 'Say hello', name: 'Hello' })).toMatchObject({ ok: true, value: { name: 'Hello', prompt: 'Say hello', nextRunAt: '2026-11-24T10:30:00.000Z' } });
    expect(clock.nextTimer()).toBe('2026-11-24T10:30:00.000Z');
    expect((await listSchedules(db))[0]).toMatchObject({ name: 'Hello', prompt: 'Say hello', enabled: true, timing: { everyMs: 7_200_000 }, nextRunAt: '2026-11-24T10:30:00.000Z' });

    const finished = nextFinish(scheduler);
    clock.advanceTo('2026-11-24T10:30:00Z');
    await finished;
    expect(sessions.turns.map((turn) => turn.input.content)).toEqual(['Say hello']);
  });

  it('a new zone moves a cron to the same wall-clock time there', async () => {
    const scheduler = await started();
    const schedule = await create(scheduler, { cron: '0 9 * * *' });
    expect(schedule.nextRunAt).toBe('2026-11-24T08:00:00.000Z');
    expect(await scheduler.update(schedule.id, { timezone: 'Asia/Tokyo' })).toMatchObject({ ok: true, value: { timezone: 'Asia/Tokyo', nextRunAt: '2026-11-25T00:00:00.000Z' } });
    expect(clock.nextTimer()).toBe('2026-11-25T00:00:00.000Z');
  });

  it('deleted, it is forgotten with its runs, its key leads nowhere, and no timer is left for it', async () => {
    const scheduler = await started();
    const schedule = await create(scheduler, { every: '1h' });
    const finished = nextFinish(scheduler);
    scheduler.runNow(schedule.id);
    await finished;
    expect(sessions.keys.has(`schedule:${schedule.id}`)).toBe(true);

    expect(await scheduler.remove(schedule.id)).toBe(true);
    expect(scheduler.get(schedule.id)).toBeUndefined();
    expect(scheduler.list()).toEqual([]);
    expect(await listSchedules(db)).toEqual([]);
    expect(await listScheduleRuns(db, schedule.id)).toEqual([]);
    expect(sessions.keys.has(`schedule:${schedule.id}`)).toBe(false);
    expect(clock.nextTimer()).toBeUndefined();
    expect(await scheduler.remove(schedule.id)).toBe(false);
    expect(scheduler.runNow(schedule.id)).toBe(false);
  });
});

describe('bad input is refused with the field named and why, and nothing is stored', () => {
  const timings: [string, ScheduleFields, string, string][] = [
    ['invalid cron', { cron: '61 * * * *' }, 'cron', 'cron: "61 * * * *" is not a valid pattern (CronPattern: Invalid value for minute: 61)'],
    ['cron with too few fields', { cron: '* * *' }, 'cron', 'cron: expected 5 or 6 fields, got 3 in "* * *"'],
    ['unknown time zone', { cron: '0 9 * * *', timezone: 'Mars/Olympus' }, 'timezone', 'timezone: "Mars/Olympus" is not an IANA time zone'],
    ['a duration under a minute', { every: '30s' }, 'every', 'every: at least one minute, got "30s"'],
    ['a malformed duration', { every: 'soon' }, 'every', 'every: expected a duration like "30m", "2h" or "1d", got "soon"'],
    ['a past at', { at: '2026-11-24T07:59:00+01:00' }, 'at', 'at: 2026-11-24T07:59:00+01:00 is in the past'],
    ['an at without offset', { at: '2026-11-25T09:00:00' }, 'at', 'at: expected an ISO 8601 time with its offset, like "2026-11-24T09:00:00+01:00", got "2026-11-25T09:00:00"'],
    ['no timing', {}, 'cron', 'cron, every, at: exactly one of cron, every and at is needed, got 0'],
    ['two timings', { cron: '0 9 * * *', every: '1h' }, 'cron, every', 'cron, every: exactly one of cron, every and at is needed, got 2'],
  ];
  const others: [string, ScheduleFields, string, string][] = [
    ['an empty prompt', { cron: '0 9 * * *', prompt: ' ' }, 'prompt', 'prompt: must not be empty'],
    ['an empty name', { cron: '0 9 * * *', name: '' }, 'name', 'name: must not be empty'],
    ['an unknown profile', { cron: '0 9 * * *', profile_id: 'nobody' }, 'profile_id', 'profile_id: no profile "nobody"'],
  ];

  it.each([...timings, ...others])('%s', async (_, fields, field, message) => {
    const scheduler = await started();
    expect(await scheduler.create({ ...morning, ...fields })).toEqual({ ok: false, field, message });
    expect(scheduler.list()).toEqual([]);
    expect(await listSchedules(db)).toEqual([]);
    expect(clock.nextTimer()).toBeUndefined();
  });

  it.each(timings)('%s: the preview refuses it word for word as create does', async (_, fields, field, message) => {
    const scheduler = await started();
    expect(scheduler.preview({ timezone: zone, ...fields })).toEqual({ ok: false, field, message });
  });

  it('an update with a bad field changes nothing; an unknown schedule is not found', async () => {
    const scheduler = await started();
    const schedule = await create(scheduler, { cron: '0 9 * * *' });
    const refusals: [ScheduleFields, string][] = [
      [{ every: '10s' }, 'every: at least one minute, got "10s"'],
      [{ timezone: 'Mars/Olympus', enabled: false }, 'timezone: "Mars/Olympus" is not an IANA time zone'],
      [{ name: ' ', enabled: false }, 'name: must not be empty'],
      [{ profile_id: 'nobody', enabled: false }, 'profile_id: no profile "nobody"'],
    ];
    for (const [fields, message] of refusals) expect(await scheduler.update(schedule.id, fields)).toMatchObject({ ok: false, message });
    expect(scheduler.get(schedule.id)).toEqual(schedule);
    const { sessionId: _, ...stored } = schedule;
    expect(await listSchedules(db)).toEqual([stored]);
    expect(await scheduler.update('nope', { enabled: false })).toEqual({ ok: false, field: 'id', message: 'no schedule nope', notFound: true });
  });
});

describe('a finished run raises a notification', () => {
  it('"<name> finished" with the answer, and "<name> failed" with the error, each pointing at the run\'s session; a skipped run raises nothing', async () => {
    const events = new HearthEventHub();
    const published: HearthEvent[] = [];
    events.subscribe((event) => published.push(event));
    const scheduler = await started();
    const notified = notifyFinishedRuns({ scheduler, notifications: new Notifications(db, events), sessions, logger: createLogger('silent') });
    const schedule = await create(scheduler, { name: 'Backups', prompt: 'Check the backups', every: '1h' });

    sessions.answer(completed('All backups are fresh.'));
    let finished = nextFinish(scheduler);
    clock.advanceTo('2026-11-24T08:00:00Z');
    const first = await finished;
    await notified();
    expect(published).toMatchObject([{ type: 'notification', title: 'Backups finished', body: 'All backups are fresh.', session_id: first.sessionId }]);

    sessions.answer(failed('model crashed'));
    finished = nextFinish(scheduler);
    clock.advanceTo('2026-11-24T09:00:00Z');
    expect((await finished).status).toBe('error');
    await notified();
    expect(published[1]).toMatchObject({ type: 'notification', title: 'Backups failed', session_id: first.sessionId });
    expect((published[1] as { body: string }).body).toMatch(/model crashed/);
    const runs = await listScheduleRuns(db, schedule.id);
    expect(runs.map((run) => run.status)).toEqual(['error', 'ok']);
    expect(runs[0]!.error).toMatch(/model crashed/);
    expect(scheduler.get(schedule.id)!.lastStatus).toBe('error');

    const held = sessions.hold();
    scheduler.runNow(schedule.id);
    await held.asked;
    const skipped = nextFinish(scheduler);
    scheduler.runNow(schedule.id);
    expect((await skipped).status).toBe('skipped');
    finished = nextFinish(scheduler);
    held.finish(stopped);
    await finished;
    await notified();
    expect(published.slice(2)).toMatchObject([{ title: 'Backups failed', body: 'The run was stopped.' }]);

    const unread = await listNotifications(db, { unreadOnly: true, limit: 10 });
    expect(unread.map((notification) => notification.title).sort()).toEqual(['Backups failed', 'Backups failed', 'Backups finished']);
  });

  it('a long answer is cut to 500 characters', async () => {
    const events = new HearthEventHub();
    const scheduler = await started();
    const notified = notifyFinishedRuns({ scheduler, notifications: new Notifications(db, events), sessions, logger: createLogger('silent') });
    const schedule = await create(scheduler, { every: '1h' });
    sessions.answer(completed('x'.repeat(600)));
    const finished = nextFinish(scheduler);
    scheduler.runNow(schedule.id);
    await finished;
    await notified();
    const [notification] = await listNotifications(db, { unreadOnly: true, limit: 10 });
    expect(notification!.body).toBe(`${'x'.repeat(499)}…`);
  });
});

describe('whose a schedule is', () => {
  it("is its person's: its runs' session is made for them, and the finished run's notification is theirs alone", async () => {
    const adult = await insertPerson(db, { name: 'Ada', role: 'adult', passphraseHash: null });
    const events = new HearthEventHub();
    const owners: HearthEvent[] = [];
    const adults: HearthEvent[] = [];
    const owner = (await listPeople(db)).find((person) => person.role === 'owner')!;
    events.subscribeFor(owner, (event) => owners.push(event));
    events.subscribeFor(adult, (event) => adults.push(event));
    const scheduler = await started();
    const notified = notifyFinishedRuns({ scheduler, notifications: new Notifications(db, events), sessions, logger: createLogger('silent') });
    const created = await scheduler.create({ ...morning, name: 'Plants', prompt: 'Water the plants', every: '1h' }, adult.id);
    if (!created.ok) throw new Error(created.message);
    expect(created.value.personId).toBe(adult.id);
    expect((await listSchedules(db)).map((schedule) => schedule.personId)).toEqual([adult.id]);

    sessions.answer(completed('Watered.'));
    const finished = nextFinish(scheduler);
    clock.advanceTo('2026-11-24T08:00:00Z');
    expect(await finished).toMatchObject({ personId: adult.id, status: 'ok' });
    await notified();
    expect(sessions.made).toEqual([{ key: `schedule:${created.value.id}`, request: { profileId: 'secretary', title: 'Plants', personId: adult.id } }]);
    expect(adults).toMatchObject([{ type: 'notification', title: 'Plants finished', body: 'Watered.' }]);
    expect(owners).toEqual([]);
    expect(await listNotifications(db, { unreadOnly: true, limit: 10, personId: owner.id })).toEqual([]);
    expect(await listNotifications(db, { unreadOnly: true, limit: 10, personId: adult.id })).toMatchObject([{ title: 'Plants finished' }]);
  });
});
