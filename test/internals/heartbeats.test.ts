// The heartbeats alone: HeartbeatTimers and runHeartbeat on an in-memory database, real profiles in
// a temp folder, a clock the test moves and sessions played in memory. When a profile beats, what
// its run sends, and what a quiet answer, a finding, a failure and a busy session leave behind.
import { once } from 'node:events';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { HearthEventHub, type HearthEvent } from '../../src/events/hearth-events.ts';
import { Notifications } from '../../src/events/notifications.ts';
import { createLogger } from '../../src/logger.ts';
import { ProfileRegistry } from '../../src/profiles/profile-registry.ts';
import type { HeartbeatResult, HeartbeatRunner } from '../../src/scheduler/heartbeat-run.ts';
import { HeartbeatTimers } from '../../src/scheduler/heartbeat-timers.ts';
import { openDatabase, type Db } from '../../src/store/database.ts';
import { listNotifications } from '../../src/store/notifications-repository.ts';
import { ManualClock } from '../support/manual-clock.ts';
import { completed, failed, ScriptedSessions, stopped } from '../support/scripted-sessions.ts';

const watcher = (heartbeat: string) => `---\nid: watcher\nname: Watcher\n${heartbeat}\n---\nYou watch the house.\n`;

let folder: string;
let db: Db;
let sessions: ScriptedSessions;
let events: HearthEventHub;
let published: HearthEvent[];
let timers: HeartbeatTimers | undefined;

beforeEach(async () => {
  folder = await mkdtemp(path.join(tmpdir(), 'hearth-heartbeats-'));
  db = await openDatabase(':memory:');
  sessions = new ScriptedSessions(db);
  events = new HearthEventHub();
  published = [];
  events.subscribe((event) => published.push(event));
});

afterEach(async () => {
  timers?.stop();
  await timers?.settled();
  timers = undefined;
  await db.destroy();
  await rm(folder, { recursive: true, force: true });
});

/** The watcher profile (with the heartbeat front matter given) and its checklist, loaded as the server loads them. */
async function runnerWith(heartbeat: string, checklist = '- Is the front door locked?\n'): Promise<HeartbeatRunner> {
  await writeFile(path.join(folder, 'watcher.md'), watcher(heartbeat));
  await writeFile(path.join(folder, 'watcher.heartbeat.md'), checklist);
  await writeFile(path.join(folder, 'plain.md'), '---\nid: plain\nname: Plain\n---\nNo heartbeat.\n');
  sessions.profileIds.add('watcher');
  return { sessions, profiles: await ProfileRegistry.open(folder), notifications: new Notifications(db, events) };
}

function timersOn(runner: HeartbeatRunner, clock: ManualClock, timezone = 'Europe/Berlin'): HeartbeatTimers {
  timers = new HeartbeatTimers({ runner, events, clock, timezone: () => timezone, logger: createLogger('silent') });
  return timers;
}

const notifications = () => published.filter((event) => event.type === 'notification');

describe('heartbeat timing', () => {
  it('beats every interval by the clock, only within active hours in the scheduler zone, and re-arms when the profile changes', async () => {
    const runner = await runnerWith('heartbeat: {every: "30m", active_hours: "08:00-22:00"}', '- Is the garage door shut?\n');
    // 07:00 in Berlin: the active hours begin at 08:00.
    const clock = new ManualClock('2026-11-24T06:00:00Z');
    const heartbeats = timersOn(runner, clock);
    heartbeats.start();
    expect(clock.nextTimer()).toBe('2026-11-24T06:30:00.000Z');

    clock.advanceTo('2026-11-24T06:30:00Z');
    expect(sessions.turns).toHaveLength(0);
    expect(clock.nextTimer()).toBe('2026-11-24T07:00:00.000Z');

    sessions.answer(completed('The garage door is open.'));
    const beat = once(heartbeats, 'heartbeat_finished') as Promise<[string, HeartbeatResult]>;
    clock.advanceTo('2026-11-24T07:00:00Z');
    const [profileId, result] = await beat;
    expect(profileId).toBe('watcher');
    expect(result.status).toBe('notified');
    expect(sessions.turns).toHaveLength(1);
    expect(sessions.turns[0]!.input.content).toContain('Is the garage door shut?');
    expect(clock.nextTimer()).toBe('2026-11-24T07:30:00.000Z');

    await writeFile(path.join(folder, 'watcher.md'), watcher('heartbeat: {every: "2h", active_hours: "08:00-22:00"}'));
    await runner.profiles.reload();
    events.publish({ type: 'profiles_changed', profiles: runner.profiles.list().map(({ id, name }) => ({ id, name })) });
    expect(clock.nextTimer()).toBe('2026-11-24T09:00:00.000Z');
  });

  it('active hours spanning midnight are read in the zone given; a profile without a heartbeat never beats; stop cancels every timer', async () => {
    const runner = await runnerWith('heartbeat: {every: "1h", active_hours: "22:00-06:00"}');
    const clock = new ManualClock('2026-11-24T20:00:00Z');
    const heartbeats = timersOn(runner, clock, 'UTC');
    heartbeats.start();
    expect(clock.nextTimer()).toBe('2026-11-24T21:00:00.000Z');
    clock.advanceTo('2026-11-24T21:00:00Z');
    expect(sessions.turns).toHaveLength(0);

    const beat = once(heartbeats, 'heartbeat_finished') as Promise<[string, HeartbeatResult]>;
    clock.advanceTo('2026-11-24T22:00:00Z');
    expect((await beat)[0]).toBe('watcher');
    expect(sessions.made.map((made) => made.key)).toEqual(['heartbeat:watcher']);

    heartbeats.stop();
    expect(clock.nextTimer()).toBeUndefined();
    events.publish({ type: 'profiles_changed', profiles: [] });
    expect(clock.nextTimer()).toBeUndefined();
  });
});

describe('heartbeat runs', () => {
  it('a HEARTBEAT_OK run leaves no trace and raises nothing; a finding notifies, titled by its first line', async () => {
    const heartbeats = timersOn(await runnerWith('heartbeat: {every: "30m", active_hours: "08:00-22:00"}'), new ManualClock('2026-11-24T09:00:00Z'));

    sessions.answer(completed('HEARTBEAT_OK'));
    const quiet = await heartbeats.runNow('watcher');
    expect(quiet).toEqual({ status: 'quiet', sessionId: expect.any(String) });
    if (quiet.status !== 'quiet') throw new Error('not quiet');
    expect(sessions.made).toEqual([{ key: 'heartbeat:watcher', request: { profileId: 'watcher', title: 'Heartbeat: Watcher' } }]);
    expect(sessions.turns).toHaveLength(1);
    const { input, how } = sessions.turns[0]!;
    expect(how).toBe('send');
    expect(input.unattended).toBe(true);
    expect(input.content).toContain('- Is the front door locked?');
    expect(input.content).toContain('HEARTBEAT_OK');
    expect(await sessions.messages(quiet.sessionId)).toEqual([]);
    expect(sessions.announced).toEqual([{ sessionId: quiet.sessionId, change: 'updated' }]);
    expect(notifications()).toEqual([]);
    expect(await listNotifications(db, { unreadOnly: false, limit: 10 })).toEqual([]);

    sessions.answer(completed('The front door is unlocked.\nIt has been unlocked since 21:04.'));
    const finding = await heartbeats.runNow('watcher');
    expect(finding).toMatchObject({ status: 'notified', sessionId: quiet.sessionId });
    expect(notifications()).toMatchObject([{ title: 'The front door is unlocked.', body: 'It has been unlocked since 21:04.', session_id: quiet.sessionId }]);
    expect(await listNotifications(db, { unreadOnly: true, limit: 10 })).toMatchObject([{ title: 'The front door is unlocked.', session_id: quiet.sessionId }]);
    const messages = await sessions.messages(quiet.sessionId);
    expect(messages.map((message) => message.role)).toEqual(['user', 'assistant']);
    expect(messages[1]!.content).toBe('The front door is unlocked.\nIt has been unlocked since 21:04.');
  });

  it('a profile that does not exist is skipped without a run', async () => {
    const heartbeats = timersOn(await runnerWith('heartbeat: {every: "30m"}'), new ManualClock('2026-11-24T09:00:00Z'));
    expect(await heartbeats.runNow('nobody')).toEqual({ status: 'skipped', reason: 'unknown_profile' });
    expect(sessions.turns).toEqual([]);
    expect(sessions.made).toEqual([]);
  });

  it('a run that fails or is stopped notifies that the heartbeat did not finish; a busy heartbeat session is skipped', async () => {
    const heartbeats = timersOn(await runnerWith('heartbeat: {every: "30m"}'), new ManualClock('2026-11-24T09:00:00Z'));
    sessions.answer(failed('model crashed'), stopped);
    const crashed = await heartbeats.runNow('watcher');
    expect(crashed).toMatchObject({ status: 'failed', notification: { title: 'The Watcher heartbeat did not finish', body: 'model crashed' } });
    expect(await heartbeats.runNow('watcher')).toMatchObject({ status: 'failed', notification: { body: 'the run was stopped' } });

    const held = sessions.hold();
    const going = heartbeats.runNow('watcher');
    await held.asked;
    expect(await heartbeats.runNow('watcher')).toEqual({ status: 'skipped', reason: 'session_busy', sessionId: crashed.sessionId });
    held.finish(completed('HEARTBEAT_OK'));
    expect(await going).toEqual({ status: 'quiet', sessionId: crashed.sessionId });
    expect(notifications().map((event) => event.type === 'notification' && event.title)).toEqual(['The Watcher heartbeat did not finish', 'The Watcher heartbeat did not finish']);
  });
});
