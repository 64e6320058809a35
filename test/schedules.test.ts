// The schedule routes and the scheduler's wiring into the app, on a whole server. What the scheduler
// itself does (times across DST, run statuses, skipped and queued runs, downtime, its session by
// key, changes, each refusal word for word) is tested in memory: test/internals/scheduler.test.ts.
import { once } from 'node:events';
import { describe, expect, it, onTestFinished } from 'vitest';
import type { HearthEvent } from '../src/events/hearth-events.ts';
import type { RunFinished } from '../src/scheduler/scheduler.ts';
import { listMessages } from '../src/store/messages-repository.ts';
import { useHearth, type Hearth, type HearthOptions } from './support/hearth-server.ts';
import { ManualClock } from './support/manual-clock.ts';
import { waitUntil } from './support/wait-until.ts';

const zone = 'Europe/Berlin';
const startApp = useHearth();

function hearthAt(clock: ManualClock, options: HearthOptions = {}): Promise<Hearth> {
  return startApp({ clock, ...options });
}

function nextFinish(hearth: Hearth): Promise<RunFinished> {
  return once(hearth.app.scheduler, 'run_finished').then(([finished]) => finished as RunFinished);
}

function nextNotification(hearth: Hearth): Promise<Extract<HearthEvent, { type: 'notification' }>> {
  return new Promise((resolve) => {
    const unsubscribe = hearth.deps.events.subscribe((event) => {
      if (event.type !== 'notification') return;
      unsubscribe();
      resolve(event);
    });
  });
}

async function create(hearth: Hearth, body: Record<string, unknown>) {
  const response = await hearth.request('POST', '/schedules', { name: 'Morning', prompt: 'Say good morning', timezone: zone, ...body });
  expect(response.status, JSON.stringify(response.body)).toBe(201);
  return response.body.schedule;
}

describe('the schedule routes', () => {
  it("POST and GET /schedules answer times in the schedule's own offset across the DST change; GET /schedules/:id/runs lists each run", async () => {
    const clock = new ManualClock('2026-03-28T07:00:00Z');
    const hearth = await hearthAt(clock);
    const daily = await create(hearth, { cron: '0 9 * * *' });
    expect(daily).toMatchObject({ cron: '0 9 * * *', timezone: zone, enabled: true, next_run_at: '2026-03-28T09:00:00+01:00', last_status: null });
    expect(daily.next_runs).toEqual(['2026-03-28T09:00:00+01:00', '2026-03-29T09:00:00+02:00', '2026-03-30T09:00:00+02:00']);
    const reminder = await create(hearth, { name: 'Plumber', at: '2026-03-29T03:15:00+02:00' });
    expect(reminder.next_run_at).toBe('2026-03-29T03:15:00+02:00');

    let finished = nextFinish(hearth);
    clock.advanceTo('2026-03-28T08:00:00Z');
    const { sessionId } = await finished;
    finished = nextFinish(hearth);
    clock.advanceTo('2026-03-29T01:15:00Z');
    expect(await finished).toMatchObject({ scheduleId: reminder.id, status: 'ok' });

    const listed = (await hearth.request('GET', '/schedules')).body.schedules;
    expect(listed.find((schedule: { id: string }) => schedule.id === daily.id)).toMatchObject({
      last_status: 'ok',
      last_run_at: '2026-03-28T09:00:00+01:00',
      next_run_at: '2026-03-29T09:00:00+02:00',
      next_runs: ['2026-03-29T09:00:00+02:00', '2026-03-30T09:00:00+02:00', '2026-03-31T09:00:00+02:00'],
    });
    expect(listed.find((schedule: { id: string }) => schedule.id === reminder.id)).toMatchObject({ enabled: false, next_run_at: null, last_status: 'ok', next_runs: [] });
    const runs = await hearth.request('GET', `/schedules/${daily.id}/runs`);
    expect(runs).toEqual({
      status: 200,
      body: [{ id: expect.any(Number), started_at: '2026-03-28T08:00:00.000Z', finished_at: '2026-03-28T08:00:00.000Z', status: 'ok', session_id: sessionId }],
    });
    expect((await hearth.request('GET', '/schedules/nope/runs')).status).toBe(404);
  });

  it("POST /schedules/:id/run starts a run now in the schedule's one session: announced as created once, its prompts stored marked scheduled, its answer notified", async () => {
    const clock = new ManualClock('2026-11-24T07:00:00Z');
    const hearth = await hearthAt(clock);
    const changes: string[] = [];
    onTestFinished(hearth.deps.events.subscribe((event) => {
      if (event.type === 'sessions_changed') changes.push(`${event.change} ${event.session_id}`);
    }));
    const schedule = await create(hearth, { cron: '0 9 * * 1-5' });

    hearth.llm.script({ content: 'Good morning!' });
    let finished = nextFinish(hearth);
    const notified = nextNotification(hearth);
    expect(await hearth.request('POST', `/schedules/${schedule.id}/run`)).toEqual({ status: 202, body: { started: true } });
    const firstRun = await finished;
    expect(await notified).toMatchObject({ title: 'Morning finished', body: 'Good morning!', session_id: firstRun.sessionId });
    expect(changes.filter((change) => change === `created ${firstRun.sessionId}`)).toHaveLength(1);
    expect(changes[0]).toBe(`created ${firstRun.sessionId}`);

    finished = nextFinish(hearth);
    await hearth.request('POST', `/schedules/${schedule.id}/run`);
    expect((await finished).sessionId).toBe(firstRun.sessionId);
    expect(changes.filter((change) => change === `created ${firstRun.sessionId}`)).toHaveLength(1);
    expect((await hearth.request('POST', '/schedules/nope/run')).status).toBe(404);

    const prompts = (await listMessages(hearth.deps.db, firstRun.sessionId!, 'display')).filter((message) => message.role === 'user');
    expect(prompts).toHaveLength(2);
    expect(prompts.every((message) => message.scheduled === true && message.schedule_id === schedule.id)).toBe(true);
    expect((await hearth.request('GET', `/sessions/${firstRun.sessionId}`)).body.title).toBe('Morning');
  });

  it('bad input is refused with 400 naming the field, the preview word for word as POST /schedules, and nothing is stored; PATCH and DELETE', async () => {
    const clock = new ManualClock('2026-11-24T07:00:00Z');
    const hearth = await hearthAt(clock);
    const timings: [string, Record<string, unknown>, string][] = [
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
    for (const [name, body, field] of timings) {
      const preview = await hearth.request('POST', '/schedules/preview', { timezone: zone, ...body });
      expect(preview.status, name).toBe(400);
      expect(preview.body.error.code, name).toBe('invalid_request');
      expect(preview.body.error.message, name).toContain(`${field}:`);
      const creation = await hearth.request('POST', '/schedules', { name: 'Bad', prompt: 'x', timezone: zone, ...body });
      expect(creation, name).toEqual(preview);
    }
    const others: [string, Record<string, unknown>, string][] = [
      ['an empty prompt', { cron: '0 9 * * *', prompt: ' ' }, 'prompt'],
      ['an unknown profile', { cron: '0 9 * * *', profile_id: 'nobody' }, 'profile_id'],
    ];
    for (const [name, body, field] of others) {
      const response = await hearth.request('POST', '/schedules', { name: 'Bad', prompt: 'x', timezone: zone, ...body });
      expect(response.status, name).toBe(400);
      expect(response.body.error.code, name).toBe('invalid_request');
      expect(response.body.error.message, name).toContain(`${field}:`);
    }
    expect((await hearth.request('GET', '/schedules')).body.schedules).toEqual([]);
    const onlyTiming = await hearth.request('POST', '/schedules/preview', { cron: '0 9 * * *', name: 'Morning' });
    expect(onlyTiming.status).toBe(400);
    expect(onlyTiming.body.error.message).toContain('name');

    const schedule = await create(hearth, { cron: '0 9 * * *' });
    const patched = await hearth.request('PATCH', `/schedules/${schedule.id}`, { every: '10s' });
    expect(patched.status).toBe(400);
    expect(patched.body.error.message).toContain('every:');
    expect((await hearth.request('GET', '/schedules')).body.schedules[0]).toEqual(schedule);
    expect((await hearth.request('PATCH', '/schedules/nope', { enabled: false })).status).toBe(404);
    expect((await hearth.request('PATCH', `/schedules/${schedule.id}`, { enabled: false })).body.schedule).toMatchObject({ enabled: false, next_run_at: null, next_runs: [] });

    expect((await hearth.request('DELETE', `/schedules/${schedule.id}`)).status).toBe(204);
    expect((await hearth.request('GET', '/schedules')).body.schedules).toEqual([]);
    expect((await hearth.request('DELETE', `/schedules/${schedule.id}`)).status).toBe(404);
  });
});

describe('POST /schedules/preview: the next three runs before anything is created', () => {
  it('a daily cron keeps 09:00 local across the spring change; every keeps real hours; without a zone, SCHEDULER_TIMEZONE; nothing is stored', async () => {
    const clock = new ManualClock('2026-03-28T07:00:00Z');
    const hearth = await hearthAt(clock, { env: { SCHEDULER_TIMEZONE: 'Asia/Tokyo' } });
    const daily = await hearth.request('POST', '/schedules/preview', { cron: '0 9 * * *', timezone: zone });
    expect(daily).toEqual({
      status: 200,
      body: { next_runs: ['2026-03-28T09:00:00+01:00', '2026-03-29T09:00:00+02:00', '2026-03-30T09:00:00+02:00'], timezone: zone },
    });
    const zoneless = await hearth.request('POST', '/schedules/preview', { cron: '0 9 * * *' });
    expect(zoneless.body).toEqual({ next_runs: ['2026-03-29T09:00:00+09:00', '2026-03-30T09:00:00+09:00', '2026-03-31T09:00:00+09:00'], timezone: 'Asia/Tokyo' });

    clock.advanceTo('2026-03-29T00:30:00Z');
    const hourly = await hearth.request('POST', '/schedules/preview', { every: '1h', timezone: zone });
    expect(hourly.body.next_runs).toEqual(['2026-03-29T03:30:00+02:00', '2026-03-29T04:30:00+02:00', '2026-03-29T05:30:00+02:00']);
    const single = await hearth.request('POST', '/schedules/preview', { at: '2026-03-29T09:00:00+02:00', timezone: zone });
    expect(single.body).toEqual({ next_runs: ['2026-03-29T09:00:00+02:00'], timezone: zone });

    // What the preview shows is what a created schedule then has.
    const created = await create(hearth, { cron: '0 9 * * *' });
    expect((await hearth.request('POST', '/schedules/preview', { cron: '0 9 * * *', timezone: zone })).body.next_runs).toEqual(created.next_runs);
    expect((await hearth.request('GET', '/schedules')).body.schedules).toHaveLength(1);
  });
});

describe("the scheduler's runs go through the agent", () => {
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
});
