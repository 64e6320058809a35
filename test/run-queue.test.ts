import { describe, expect, it } from 'vitest';
import type { RunFinished } from '../src/scheduler/scheduler.ts';
import { useHearth, type Hearth } from './support/hearth-server.ts';
import { ManualClock } from './support/manual-clock.ts';
import type { RecordedRequest, ScriptedLlm } from './support/scripted-llm.ts';
import { waitUntil } from './support/wait-until.ts';

// Runs through a queue (issue 24): at most LLM_MAX_CONCURRENT requests at a backend, at most
// SCHEDULER_MAX_CONCURRENT scheduled runs, a person's turn ahead of scheduled ones.

const hearthWith = useHearth();

/** The most chat requests the scripted LLM had open at once, counted from their arrival to their response closing. */
function countInFlight(llm: ScriptedLlm): { readonly most: number; readonly now: number } {
  let now = 0;
  let most = 0;
  llm.on('request', () => {
    now += 1;
    most = Math.max(most, now);
  });
  llm.on('end', () => {
    now -= 1;
  });
  return {
    get most() {
      return most;
    },
    get now() {
      return now;
    },
  };
}

function lastUserText(request: RecordedRequest): string {
  const messages = (request.body?.messages ?? []) as { role: string; content: string }[];
  return messages.findLast((message) => message.role === 'user')?.content ?? '';
}

function countFinished(hearth: Hearth): { readonly count: number; readonly statuses: Map<string, number> } {
  const statuses = new Map<string, number>();
  let count = 0;
  hearth.app.scheduler.on('run_finished', (finished: RunFinished) => {
    count += 1;
    statuses.set(finished.status, (statuses.get(finished.status) ?? 0) + 1);
  });
  return {
    get count() {
      return count;
    },
    statuses,
  };
}

/**
 * Through the scheduler the POST /schedules route calls (test/schedules.test.ts covers the route): a thousand
 * requests through HTTP cost a few CPU-seconds and test nothing the storm is about.
 */
async function createSchedules(hearth: Hearth, count: number, every = '1h'): Promise<string[]> {
  const ids: string[] = [];
  for (let index = 0; index < count; index++) {
    const created = await hearth.app.scheduler.create({ name: `Job ${index}`, prompt: `scheduled job ${index}`, every, timezone: 'UTC' });
    if (!created.ok) throw new Error(created.message);
    ids.push(created.value.id);
  }
  return ids;
}

describe('1,000 schedules due at once', () => {
  it('never has more than LLM_MAX_CONCURRENT requests at the LLM, finishes every run, answers a person first and keeps /health answering', async () => {
    const scheduleCount = 1_000;
    const clock = new ManualClock('2026-05-04T08:00:00Z');
    const hearth = await hearthWith({ clock });
    expect(hearth.config.LLM_MAX_CONCURRENT).toBe(2);
    expect(hearth.config.SCHEDULER_MAX_CONCURRENT).toBe(2);
    const personPrompt = 'Are you there?';
    // Each scheduled answer takes a few milliseconds at the LLM, so that calls overlap there unless something holds them back.
    hearth.llm.respondWith((request) => (lastUserText(request) === personPrompt ? { content: 'Here I am.' } : { content: 'Job done.', chunkSize: 16, delayMs: 5 }));
    await createSchedules(hearth, scheduleCount);
    const inFlight = countInFlight(hearth.llm);
    const finished = countFinished(hearth);
    const person = await hearth.createSession();
    const socket = await hearth.connect(person);
    await socket.next('session_sync');

    // The due pass hands the event loop back between slices: a callback queued as it begins runs before it has gone through all 1,000.
    let rescheduledWhenLoopTurned: number | undefined;
    const dueAt = Date.parse('2026-05-04T09:00:00Z');
    setImmediate(() => {
      rescheduledWhenLoopTurned = hearth.app.scheduler.list().filter((schedule) => Date.parse(schedule.nextRunAt ?? '') > dueAt).length;
    });
    clock.advanceTo('2026-05-04T09:00:00Z');
    await waitUntil(() => rescheduledWhenLoopTurned !== undefined);
    expect(rescheduledWhenLoopTurned).toBeLessThan(scheduleCount);

    await hearth.llm.waitForRequest(10);
    // GET /health answers, again and again, while the storm is under way.
    for (let round = 0; round < 20; round++) {
      const health = await hearth.request('GET', '/health');
      expect(health.status).toBe(200);
    }
    expect(finished.count).toBeLessThan(scheduleCount);

    // The schedules that wait say so.
    const listed = await hearth.request('GET', '/schedules');
    const queued = listed.body.schedules.filter((schedule: { last_status: string | null }) => schedule.last_status === 'queued').length;
    expect(queued).toBeGreaterThan(scheduleCount / 2);


    const requestsBeforeMessage = hearth.llm.requests.length;
    socket.send({ type: 'message', content: personPrompt });
    const answer = await socket.next('stream_end', 30_000);
    expect(answer.content).toBe('Here I am.');
    const finishedWhenAnswered = finished.count;
    const personRequest = hearth.llm.requests.findIndex((request) => lastUserText(request) === personPrompt);
    // Only the scheduled runs already going (two, one model call each) may reach the LLM before it.
    expect(personRequest - requestsBeforeMessage).toBeLessThanOrEqual(hearth.config.SCHEDULER_MAX_CONCURRENT + hearth.config.LLM_MAX_CONCURRENT);
    expect(finishedWhenAnswered).toBeLessThan(scheduleCount - 100);
    // Only the scheduled runs already going (two, one model call each) may reach the LLM before it.



    await waitUntil(() => finished.count === scheduleCount, 240_000);
    expect(Object.fromEntries(finished.statuses)).toEqual({ ok: scheduleCount });
    expect(inFlight.most).toBeLessThanOrEqual(hearth.config.LLM_MAX_CONCURRENT);
    expect(inFlight.most).toBeGreaterThan(0);
    const runs = await hearth.deps.db.selectFrom('schedule_runs').select(['status']).execute();
    expect(runs).toHaveLength(scheduleCount);
    expect(runs.every((run) => run.status === 'ok')).toBe(true);
    socket.close();
  }, 300_000);
});

describe('the LLM queue', () => {
  it('lets a person’s call in before scheduled calls that waited longer, and the waiting run says it is queued', async () => {
    const clock = new ManualClock('2026-05-04T08:00:00Z');
    const hearth = await hearthWith({ clock, env: { LLM_MAX_CONCURRENT: '1', SCHEDULER_MAX_CONCURRENT: '3' } });
    const personPrompt = 'Me first, please';
    // The first scheduled call holds the only place until its run is stopped.
    hearth.llm.respondWith((request, index) => (index === 0 ? { hang: true } : { content: lastUserText(request) === personPrompt ? 'Hello.' : 'Job done.' }));
    await createSchedules(hearth, 3);
    clock.advanceTo('2026-05-04T09:00:00Z');
    const blocker = await hearth.llm.waitForRequest(1);
    const blockerSession = await waitUntil(async () => {
      const listed = await hearth.request('GET', '/schedules');
      const running = listed.body.schedules.filter((schedule: { last_status: string }) => schedule.last_status === 'running');
      return running.length === 3 && hearth.app.agent.isRunning(running[0].session_id) ? running : undefined;
    });
    const person = await hearth.createSession();
    const socket = await hearth.connect(person);
    await socket.next('session_sync');
    socket.send({ type: 'message', content: personPrompt });
    expect((await socket.next('run_status')).status).toBe('queued');

    // Stop the scheduled run holding the place: the next request at the LLM is the person's, not the two scheduled ones waiting.
    const holder = blockerSession.find((schedule: { prompt: string }) => schedule.prompt === lastUserText(blocker));
    expect(holder).toBeDefined();
    expect((await hearth.request('POST', `/sessions/${holder.session_id}/stop`)).body).toEqual({ stopped: true });
    const next = await hearth.llm.waitForRequest(2);
    expect(lastUserText(next)).toBe(personPrompt);
    expect((await socket.next('run_status')).status).toBe('running');
    expect((await socket.next('stream_end')).content).toBe('Hello.');
    await waitUntil(() => hearth.llm.requests.length === 4);
    socket.close();
  });

  it('drops a stopped run’s waiting call at once: it never reaches the LLM', async () => {
    const hearth = await hearthWith({ env: { LLM_MAX_CONCURRENT: '1' } });
    hearth.llm.respondWith((request) => (lastUserText(request) === 'hold the line' ? { hang: true } : { content: `answer to ${lastUserText(request)}` }));
    const holding = await hearth.createSession();
    const holder = await hearth.connect(holding);
    await holder.next('session_sync');
    holder.send({ type: 'message', content: 'hold the line' });
    await hearth.llm.waitForRequest(1);

    const waiting = await hearth.createSession();
    const waiter = await hearth.connect(waiting);
    await waiter.next('session_sync');
    waiter.send({ type: 'message', content: 'never sent' });
    expect((await waiter.next('run_status')).status).toBe('queued');
    waiter.send({ type: 'stop' });
    expect((await waiter.next('stream_stopped')).reason).toBe('user');
    expect(hearth.llm.requests).toHaveLength(1);

    // The place frees up; a third session's call is the next and only other request the LLM sees.
    holder.send({ type: 'stop' });
    await holder.next('stream_stopped');
    const third = await hearth.createSession();
    const asker = await hearth.connect(third);
    await asker.next('session_sync');
    asker.send({ type: 'message', content: 'after' });
    expect((await asker.next('stream_end')).content).toBe('answer to after');
    expect(hearth.llm.requests.map(lastUserText)).toEqual(['hold the line', 'after']);
    for (const socket of [holder, waiter, asker]) socket.close();
  });
});
