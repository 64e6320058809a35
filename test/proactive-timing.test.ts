import { once } from 'node:events';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { HeartbeatResult } from '../src/scheduler/heartbeat-run.ts';
import type { HearthEvent } from '../src/events/hearth-events.ts';
import type { RunFinished } from '../src/scheduler/scheduler.ts';
import { type Hearth, useHearth } from './support/hearth-server.ts';
import { ManualClock } from './support/manual-clock.ts';

const start = useHearth();


function nextEvent<Type extends HearthEvent['type']>(hearth: Hearth, type: Type): Promise<Extract<HearthEvent, { type: Type }>> {
  return new Promise((resolve) => {
    const unsubscribe = hearth.deps.events.subscribe((event) => {
      if (event.type !== type) return;
      unsubscribe();
      resolve(event as Extract<HearthEvent, { type: Type }>);
    });
  });
}

describe('a finished scheduled run raises a notification', () => {
  it('"<name> finished" with the answer, and "<name> failed" with the error, each pointing at the run\'s session', async () => {
    const clock = new ManualClock('2026-11-24T06:00:00Z');
    const hearth = await start({ clock });
    const created = await hearth.request('POST', '/schedules', { name: 'Backups', prompt: 'Check the backups', every: '1h', timezone: 'Europe/Berlin' });
    expect(created.status).toBe(201);

    hearth.llm.script({ content: 'All backups are fresh.' });
    let finished = once(hearth.app.scheduler, 'run_finished').then(([event]) => event as RunFinished);
    let notified = nextEvent(hearth, 'notification');
    clock.advanceTo('2026-11-24T07:00:00Z');
    const first = await finished;
    expect(await notified).toMatchObject({ title: 'Backups finished', body: 'All backups are fresh.', session_id: first.sessionId });

    hearth.llm.script({ status: 500, errorMessage: 'model crashed' });
    finished = once(hearth.app.scheduler, 'run_finished').then(([event]) => event as RunFinished);
    notified = nextEvent(hearth, 'notification');
    clock.advanceTo('2026-11-24T08:00:00Z');
    expect((await finished).status).toBe('error');
    const failure = await notified;
    expect(failure).toMatchObject({ title: 'Backups failed', session_id: first.sessionId });
    expect(failure.body).toMatch(/model crashed/);
    // The run statuses docs/protocol.md names: ok, error, skipped.
    const runs = (await hearth.request('GET', `/schedules/${created.body.schedule.id}/runs`)).body;
    expect(runs.map((run: { status: string }) => run.status)).toEqual(['error', 'ok']);
    expect(runs[0].error).toMatch(/model crashed/);
    const [schedule] = (await hearth.request('GET', '/schedules')).body.schedules;
    expect(schedule.last_status).toBe('error');

    const unread = await hearth.request('GET', '/notifications?unread=1');
    expect(unread.body.notifications.map((notification: { title: string }) => notification.title).sort()).toEqual(['Backups failed', 'Backups finished']);
  });
});

const watcher = (every: string) => `---\nid: watcher\nname: Watcher\nheartbeat: {every: "${every}", active_hours: "08:00-22:00"}\n---\nYou watch the house.\n`;

describe('heartbeat timing', () => {
  it('beats every interval by the clock, only within active hours in the scheduler zone, and re-arms when the profile changes', async () => {
    // 07:00 in Berlin: the active hours begin at 08:00.
    const clock = new ManualClock('2026-11-24T06:00:00Z');
    const hearth = await start({
      clock,
      env: { SCHEDULER_TIMEZONE: 'Europe/Berlin' },
      profiles: { watcher: watcher('30m'), 'watcher.heartbeat': '- Is the garage door shut?\n' },
    });
    expect(clock.nextTimer()).toBe('2026-11-24T06:30:00.000Z');

    clock.advanceTo('2026-11-24T06:30:00Z');
    expect(hearth.llm.requests).toHaveLength(0);
    expect(clock.nextTimer()).toBe('2026-11-24T07:00:00.000Z');

    hearth.llm.script({ content: 'The garage door is open.' });
    const beat = once(hearth.app.heartbeats, 'heartbeat_finished') as Promise<[string, HeartbeatResult]>;
    clock.advanceTo('2026-11-24T07:00:00Z');
    const [profileId, result] = await beat;
    expect(profileId).toBe('watcher');
    expect(result.status).toBe('notified');
    expect(hearth.llm.requests).toHaveLength(1);
    expect(JSON.stringify(hearth.llm.requests[0]!.body.messages)).toContain('Is the garage door shut?');
    expect(clock.nextTimer()).toBe('2026-11-24T07:30:00.000Z');

    const changed = nextEvent(hearth, 'profiles_changed');
    await writeFile(path.join(hearth.config.PROFILES_DIR, 'watcher.md'), watcher('2h'));
    await changed;
    expect(clock.nextTimer()).toBe('2026-11-24T09:00:00.000Z');
  });
});
