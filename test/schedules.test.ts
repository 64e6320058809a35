import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import { Kysely, Migrator, SqliteDialect } from 'kysely';
import { describe, expect, it, onTestFinished } from 'vitest';
import type { RunFinished } from '../src/scheduler/scheduler.ts';
import { migrationProvider } from '../src/store/migrations/index.ts';
import { listMessages } from '../src/store/messages-repository.ts';
import { startHearth, useHearth, type Hearth, type HearthOptions } from './support/hearth-server.ts';
import { ManualClock } from './support/manual-clock.ts';
import { startScriptedOllama } from './support/scripted-ollama.ts';
import { waitUntil } from './support/wait-until.ts';

const zone = 'Europe/Berlin';
const startApp = useHearth();

function hearthAt(clock: ManualClock, options: HearthOptions = {}): Promise<Hearth> {
  return startApp({ clock, ...options });
}

function nextFinish(hearth: Hearth): Promise<RunFinished> {
  return once(hearth.app.scheduler, 'run_finished').then(([finished]) => finished as RunFinished);
}

async function create(hearth: Hearth, body: Record<string, unknown>) {
  const response = await hearth.request('POST', '/schedules', { name: 'Morning', prompt: 'Say good morning', timezone: zone, ...body });
  expect(response.status, JSON.stringify(response.body)).toBe(201);
  return response.body.schedule;
}

describe('schedule times across the spring DST change in Europe/Berlin', () => {
  it('a daily cron fires at 09:00 local on each side of the change', async () => {
    const clock = new ManualClock('2026-03-28T07:00:00Z');
    const hearth = await hearthAt(clock);
    const schedule = await create(hearth, { cron: '0 9 * * *' });
    expect(schedule.next_runs).toEqual(['2026-03-28T09:00:00+01:00', '2026-03-29T09:00:00+02:00', '2026-03-30T09:00:00+02:00']);
    expect(clock.nextTimer()).toBe('2026-03-28T08:00:00.000Z');

    let finished = nextFinish(hearth);
    clock.advanceTo('2026-03-28T08:00:00Z');
    expect((await finished).status).toBe('ok');
    expect(clock.nextTimer()).toBe('2026-03-29T07:00:00.000Z');

    finished = nextFinish(hearth);
    clock.advanceTo('2026-03-29T07:00:00Z');
    const second = await finished;
    expect(second.status).toBe('ok');

    const display = await listMessages(hearth.deps.db, second.sessionId!, 'display');
    const prompts = display.filter((message) => message.role === 'user');
    expect(prompts).toHaveLength(2);
    expect(prompts.every((message) => message.scheduled === true && message.schedule_id === schedule.id)).toBe(true);
    const session = await hearth.request('GET', `/sessions/${second.sessionId}`);
    expect(session.body.title).toBe('Morning');
    const runs = await hearth.request('GET', `/schedules/${schedule.id}/runs`);
    expect(runs.body.map((run: { status: string; session_id: string }) => [run.status, run.session_id])).toEqual([
      ['ok', second.sessionId],
      ['ok', second.sessionId],
    ]);
  });

  it('every 1h keeps whole hours of real time through the change, and at fires once then disables itself', async () => {
    const clock = new ManualClock('2026-03-29T00:30:00Z');
    const hearth = await hearthAt(clock);
    const hourly = await create(hearth, { every: '1h' });
    expect(hourly.next_runs).toEqual(['2026-03-29T03:30:00+02:00', '2026-03-29T04:30:00+02:00', '2026-03-29T05:30:00+02:00']);
    const reminder = await create(hearth, { name: 'Plumber', at: '2026-03-29T03:15:00+02:00' });
    expect(reminder.next_run_at).toBe('2026-03-29T03:15:00+02:00');

    let finished = nextFinish(hearth);
    clock.advanceTo('2026-03-29T01:15:00Z');
    expect(await finished).toMatchObject({ scheduleId: reminder.id, status: 'ok' });
    const after = await hearth.request('GET', '/schedules');
    const stored = after.body.schedules.find((schedule: { id: string }) => schedule.id === reminder.id);
    expect(stored).toMatchObject({ enabled: false, next_run_at: null, last_status: 'ok', next_runs: [] });
    expect(clock.nextTimer()).toBe('2026-03-29T01:30:00.000Z');

    finished = nextFinish(hearth);
    clock.advanceTo('2026-03-29T01:30:00Z');
    expect(await finished).toMatchObject({ scheduleId: hourly.id, status: 'ok' });
    expect(clock.nextTimer()).toBe('2026-03-29T02:30:00.000Z');
  });
});

describe('runs', () => {
  it('after downtime a missed schedule runs once at start, and a restart keeps schedules and next runs', async () => {
    const clock = new ManualClock('2026-11-24T07:00:00Z');
    const dataDir = await mkdtemp(path.join(tmpdir(), 'hearth-schedules-'));
    const llm = await startScriptedOllama();
    onTestFinished(async () => {
      await llm.close();
      await rm(dataDir, { recursive: true, force: true });
    });
    const first = await startHearth({ clock, dataDir, llm });
    const schedule = await create(first, { every: '30m' });
    await first.close();

    // Three slots pass while the server is down.
    clock.advanceTo('2026-11-24T08:40:00Z');
    const second = await hearthAt(clock, { dataDir, llm });
    const runs = await waitUntil(async () => {
      const answer = await second.request('GET', `/schedules/${schedule.id}/runs`);
      return answer.body.length > 0 && answer.body.every((run: { status: string }) => run.status !== 'running') && answer.body;
    });
    expect(runs.map((run: { status: string }) => run.status)).toEqual(['ok']);
    const listed = (await second.request('GET', '/schedules')).body.schedules;
    expect(listed).toHaveLength(1);
    expect(listed[0]).toMatchObject({ id: schedule.id, next_run_at: '2026-11-24T10:00:00+01:00', last_status: 'ok' });
    expect(clock.nextTimer()).toBe('2026-11-24T09:00:00.000Z');
  });

  it('a run that is due while the previous one is still going is recorded skipped', async () => {
    const clock = new ManualClock('2026-11-24T07:00:00Z');
    const hearth = await hearthAt(clock);
    const schedule = await create(hearth, { every: '1m' });
    hearth.llm.script({ hang: true });
    clock.advanceTo('2026-11-24T07:01:00Z');
    await hearth.llm.waitForRequest(1);

    const skipped = nextFinish(hearth);
    clock.advanceTo('2026-11-24T07:02:00Z');
    expect(await skipped).toMatchObject({ scheduleId: schedule.id, status: 'skipped' });

    const stopped = nextFinish(hearth);
    const sessionId = hearth.app.scheduler.get(schedule.id)!.sessionId!;
    expect((await hearth.request('POST', `/sessions/${sessionId}/stop`)).body).toEqual({ stopped: true });
    expect(await stopped).toMatchObject({ scheduleId: schedule.id, status: 'stopped' });
    const runs = (await hearth.request('GET', `/schedules/${schedule.id}/runs`)).body;
    expect(runs.map((run: { status: string }) => run.status)).toEqual(['skipped', 'stopped']);
  });

  it('waits for a busy session instead of failing', async () => {
    const clock = new ManualClock('2026-11-24T07:00:00Z');
    const hearth = await hearthAt(clock);
    const sessionId = await hearth.createSession();
    hearth.llm.script({ hang: true });
    const busy = hearth.app.agent.send(sessionId, { content: 'a long question' });
    expect(busy.ok).toBe(true);
    await hearth.llm.waitForRequest(1);

    const schedule = await create(hearth, { every: '5m', session_id: sessionId });
    const finished = nextFinish(hearth);
    clock.advanceTo('2026-11-24T07:05:00Z');
    const running = await waitUntil(async () => {
      const runs = (await hearth.request('GET', `/schedules/${schedule.id}/runs`)).body;
      return runs.length === 1 && runs[0].status === 'running';
    });
    expect(running).toBe(true);
    const before = await listMessages(hearth.deps.db, sessionId, 'display');
    expect(before.filter((message) => message.scheduled)).toHaveLength(0);

    hearth.app.agent.stop(sessionId);
    expect(await finished).toMatchObject({ status: 'ok', sessionId });
    const after = await listMessages(hearth.deps.db, sessionId, 'display');
    expect(after.filter((message) => message.role === 'user').map((message) => [message.content, message.scheduled ?? false])).toEqual([
      ['a long question', false],
      ['Say good morning', true],
    ]);
  });

  it('POST /schedules/:id/run starts a run now and reuses the schedule session', async () => {
    const clock = new ManualClock('2026-11-24T07:00:00Z');
    const hearth = await hearthAt(clock);
    const schedule = await create(hearth, { cron: '0 9 * * 1-5' });
    let finished = nextFinish(hearth);
    expect((await hearth.request('POST', `/schedules/${schedule.id}/run`)).status).toBe(202);
    const firstRun = await finished;
    finished = nextFinish(hearth);
    await hearth.request('POST', `/schedules/${schedule.id}/run`);
    expect((await finished).sessionId).toBe(firstRun.sessionId);
    expect((await hearth.request('POST', '/schedules/nope/run')).status).toBe(404);
  });

  it('a scheduled run\'s new session is announced as created once, then as updated', async () => {
    const clock = new ManualClock('2026-11-24T07:00:00Z');
    const hearth = await hearthAt(clock);
    const changes: string[] = [];
    onTestFinished(hearth.deps.events.subscribe((event) => {
      if (event.type === 'sessions_changed') changes.push(`${event.change} ${event.session_id}`);
    }));
    const schedule = await create(hearth, { cron: '0 9 * * 1-5' });
    let finished = nextFinish(hearth);
    await hearth.request('POST', `/schedules/${schedule.id}/run`);
    const { sessionId } = await finished;
    expect(changes.filter((change) => change === `created ${sessionId}`)).toHaveLength(1);
    expect(changes[0]).toBe(`created ${sessionId}`);
    finished = nextFinish(hearth);
    await hearth.request('POST', `/schedules/${schedule.id}/run`);
    await finished;
    expect(changes.filter((change) => change === `created ${sessionId}`)).toHaveLength(1);
  });
});

describe('run statuses', () => {
  it("runs and schedules stored as 'failed' before DESIGN's 'error' read as 'error' after the migration", async () => {
    const dataDir = await mkdtemp(path.join(tmpdir(), 'hearth-schedules-'));
    onTestFinished(() => rm(dataDir, { recursive: true, force: true }));
    const db = new Kysely<any>({ dialect: new SqliteDialect({ database: new SqliteDatabase(path.join(dataDir, 'hearth.db')) }) });
    const migrated = await new Migrator({ db, provider: migrationProvider }).migrateTo('2026-11-25-schedules');
    expect(migrated.error).toBeUndefined();
    const schedule = (id: string, lastStatus: string) => ({
      id, name: id, prompt: 'Check', cron: '0 9 * * *', every_ms: null, at: null, timezone: zone, profile_id: 'secretary', session_id: null,
      enabled: 1, created_at: '2026-11-24T06:00:00.000Z', next_run_at: '2026-11-25T08:00:00.000Z', last_run_at: '2026-11-24T06:30:00.000Z', last_status: lastStatus,
    });
    await db.insertInto('schedules').values([schedule('broken', 'failed'), schedule('fine', 'ok')]).execute();
    const run = (scheduleId: string, status: string, error: string | null) => ({
      schedule_id: scheduleId, started_at: '2026-11-24T06:30:00.000Z', finished_at: '2026-11-24T06:31:00.000Z', status, session_id: null, error,
    });
    await db.insertInto('schedule_runs').values([run('broken', 'failed', 'model crashed'), run('fine', 'ok', null), run('fine', 'skipped', 'the previous run was still going')]).execute();
    await db.destroy();

    const hearth = await hearthAt(new ManualClock('2026-11-24T07:00:00Z'), { dataDir });
    const listed = (await hearth.request('GET', '/schedules')).body.schedules;
    expect(Object.fromEntries(listed.map((stored: { id: string; last_status: string }) => [stored.id, stored.last_status]))).toEqual({ broken: 'error', fine: 'ok' });
    expect((await hearth.request('GET', '/schedules/broken/runs')).body).toMatchObject([{ status: 'error', error: 'model crashed' }]);
    expect((await hearth.request('GET', '/schedules/fine/runs')).body.map((stored: { status: string }) => stored.status)).toEqual(['skipped', 'ok']);
  });
});

describe('POST /schedules/preview: the next three runs before anything is created', () => {
  it('a daily cron keeps 09:00 local across the spring change; every keeps real hours; nothing is stored', async () => {
    const clock = new ManualClock('2026-03-28T07:00:00Z');
    const hearth = await hearthAt(clock);
    const daily = await hearth.request('POST', '/schedules/preview', { cron: '0 9 * * *', timezone: zone });
    expect(daily).toEqual({
      status: 200,
      body: { next_runs: ['2026-03-28T09:00:00+01:00', '2026-03-29T09:00:00+02:00', '2026-03-30T09:00:00+02:00'], timezone: zone },
    });

    clock.advanceTo('2026-03-29T00:30:00Z');
    const hourly = await hearth.request('POST', '/schedules/preview', { every: '1h', timezone: zone });
    expect(hourly.body.next_runs).toEqual(['2026-03-29T03:30:00+02:00', '2026-03-29T04:30:00+02:00', '2026-03-29T05:30:00+02:00']);
    const once = await hearth.request('POST', '/schedules/preview', { at: '2026-03-29T09:00:00+02:00', timezone: zone });
    expect(once.body).toEqual({ next_runs: ['2026-03-29T09:00:00+02:00'], timezone: zone });

    // What the preview shows is what a created schedule then has.
    const created = await create(hearth, { cron: '0 9 * * *' });
    expect((await hearth.request('POST', '/schedules/preview', { cron: '0 9 * * *', timezone: zone })).body.next_runs).toEqual(created.next_runs);
    expect((await hearth.request('GET', '/schedules')).body.schedules).toHaveLength(1);
  });

  it('without a timezone it previews in SCHEDULER_TIMEZONE', async () => {
    const clock = new ManualClock('2026-11-24T07:00:00Z');
    const hearth = await hearthAt(clock, { env: { SCHEDULER_TIMEZONE: 'Asia/Tokyo' } });
    const preview = await hearth.request('POST', '/schedules/preview', { cron: '0 9 * * *' });
    expect(preview.body).toEqual({ next_runs: ['2026-11-25T09:00:00+09:00', '2026-11-26T09:00:00+09:00', '2026-11-27T09:00:00+09:00'], timezone: 'Asia/Tokyo' });
  });

  const refused: [string, Record<string, unknown>, string][] = [
    ['invalid cron', { cron: '61 * * * *' }, 'cron'],
    ['cron with too few fields', { cron: '* * *' }, 'cron'],
    ['unknown time zone', { cron: '0 9 * * *', timezone: 'Mars/Olympus' }, 'timezone'],
    ['a duration under a minute', { every: '30s' }, 'every'],
    ['a malformed duration', { every: 'soon' }, 'every'],
    ['a past at', { at: '2026-11-24T07:59:00+01:00' }, 'at'],
    ['an at without offset', { at: '2026-11-25T09:00:00' }, 'at'],
    ['no timing', {}, 'cron, every, at'],
    ['two timings', { cron: '0 9 * * *', every: '1h' }, 'cron, every'],
  ];
  it.each(refused)('%s: 400 naming the field, word for word as POST /schedules', async (_, body, field) => {
    const clock = new ManualClock('2026-11-24T07:00:00Z');
    const hearth = await hearthAt(clock);
    const preview = await hearth.request('POST', '/schedules/preview', { timezone: zone, ...body });
    expect(preview.status).toBe(400);
    expect(preview.body.error.code).toBe('invalid_request');
    expect(preview.body.error.message).toContain(`${field}:`);
    const creation = await hearth.request('POST', '/schedules', { name: 'Bad', prompt: 'x', timezone: zone, ...body });
    expect(creation.body).toEqual(preview.body);
    expect((await hearth.request('GET', '/schedules')).body.schedules).toEqual([]);
  });

  it('takes only timing fields', async () => {
    const hearth = await hearthAt(new ManualClock('2026-11-24T07:00:00Z'));
    const response = await hearth.request('POST', '/schedules/preview', { cron: '0 9 * * *', name: 'Morning' });
    expect(response.status).toBe(400);
    expect(response.body.error.message).toContain('name');
  });
});

describe('bad input is refused with the field named, and nothing is stored', () => {
  const cases: [string, Record<string, unknown>, string][] = [
    ['invalid cron', { cron: '61 * * * *' }, 'cron'],
    ['cron with too few fields', { cron: '* * *' }, 'cron'],
    ['unknown time zone', { cron: '0 9 * * *', timezone: 'Mars/Olympus' }, 'timezone'],
    ['a duration under a minute', { every: '30s' }, 'every'],
    ['a malformed duration', { every: 'soon' }, 'every'],
    ['a past at', { at: '2026-11-24T07:59:00+01:00' }, 'at'],
    ['an at without offset', { at: '2026-11-25T09:00:00' }, 'at'],
    ['no timing', {}, 'cron, every, at'],
    ['two timings', { cron: '0 9 * * *', every: '1h' }, 'cron, every'],
    ['an empty prompt', { cron: '0 9 * * *', prompt: ' ' }, 'prompt'],
    ['an unknown profile', { cron: '0 9 * * *', profile_id: 'nobody' }, 'profile_id'],
  ];
  it.each(cases)('%s', async (_, body, field) => {
    const clock = new ManualClock('2026-11-24T07:00:00Z');
    const hearth = await hearthAt(clock);
    const response = await hearth.request('POST', '/schedules', { name: 'Bad', prompt: 'x', timezone: zone, ...body });
    expect(response.status).toBe(400);
    expect(response.body.error.code).toBe('invalid_request');
    expect(response.body.error.message).toContain(`${field}:`);
    expect((await hearth.request('GET', '/schedules')).body.schedules).toEqual([]);
  });

  it('a PATCH with a bad field changes nothing', async () => {
    const clock = new ManualClock('2026-11-24T07:00:00Z');
    const hearth = await hearthAt(clock);
    const schedule = await create(hearth, { cron: '0 9 * * *' });
    const response = await hearth.request('PATCH', `/schedules/${schedule.id}`, { every: '10s' });
    expect(response.status).toBe(400);
    expect(response.body.error.message).toContain('every:');
    expect((await hearth.request('GET', '/schedules')).body.schedules[0]).toEqual(schedule);
    expect((await hearth.request('PATCH', '/schedules/nope', { enabled: false })).status).toBe(404);
  });
});
