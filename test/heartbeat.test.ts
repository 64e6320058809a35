import { once } from 'node:events';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { judgeHeartbeatAnswer } from '../src/agent/heartbeat.ts';
import type { HearthEvent } from '../src/events/hearth-events.ts';
import type { HeartbeatResult } from '../src/scheduler/heartbeat-run.ts';
import { isWithinActiveHours, parseHeartbeat, type HeartbeatSettings } from '../src/profiles/heartbeat-settings.ts';
import { loadProfiles, parseProfile } from '../src/profiles/load-profiles.ts';
import { EventSocket } from './support/event-socket.ts';
import { type Hearth, useHearth } from './support/hearth-server.ts';
import { ManualClock } from './support/manual-clock.ts';

let directory: string | undefined;
afterEach(async () => {
  if (directory) await rm(directory, { recursive: true, force: true });
  directory = undefined;
});
// Registered after the hook above, so the app is closed first (hooks run last-registered first).
const startApp = useHearth();

const profileWith = (heartbeat: string) => `---\nid: watcher\nname: Watcher\n${heartbeat}\n---\nYou watch the house.\n`;
const parseWatcher = (heartbeat: string) => parseProfile('/profiles/watcher.md', profileWith(heartbeat));
const errorOf = (heartbeat: string) => {
  const result = parseWatcher(heartbeat);
  return result.ok ? 'parsed' : result.error.message;
};

describe('heartbeat front matter', () => {
  it('reads every and active_hours', () => {
    const result = parseWatcher('heartbeat: {every: "30m", active_hours: "08:00-22:00"}');
    expect(result.ok && result.profile.heartbeat).toEqual({ every: '30m', everyMs: 30 * 60_000, activeHours: { start: 8 * 60, end: 22 * 60 } });
    const daily = parseWatcher('heartbeat:\n  every: 1d');
    expect(daily.ok && daily.profile.heartbeat).toEqual({ every: '1d', everyMs: 86_400_000 });
    const none = parseWatcher('description: no heartbeat');
    expect(none.ok && none.profile.heartbeat).toBeUndefined();
  });

  it('refuses a bad heartbeat, naming the field and the expected shape', () => {
    expect(errorOf('heartbeat: {every: "30s"}')).toBe('heartbeat.every "30s" must be a duration like 30m, 2h or 1d (at least 1m)');
    expect(errorOf('heartbeat: {every: "0m"}')).toBe('heartbeat.every "0m" must be a duration like 30m, 2h or 1d (at least 1m)');
    expect(errorOf('heartbeat: {every: 30}')).toBe('heartbeat.every must be a string, not 30');
    expect(errorOf('heartbeat: {active_hours: "08:00-22:00"}')).toBe('missing required field "every"');
    expect(errorOf('heartbeat: {every: "1h", active_hours: "8-22"}')).toBe('heartbeat.active_hours "8-22" must be two times like 08:00-22:00');
    expect(errorOf('heartbeat: {every: "1h", active_hours: "08:00-24:30"}')).toBe('heartbeat.active_hours "08:00-24:30" must be two times like 08:00-22:00');
    expect(errorOf('heartbeat: {every: "1h", active_hours: "09:00-09:00"}')).toBe('heartbeat.active_hours "09:00-09:00" starts and ends at the same time');
    expect(errorOf('heartbeat: {every: "1h", hours: "09:00-17:00"}')).toBe('unknown field "hours"');
  });

  it('active hours are read in the given time zone and may span midnight', () => {
    const daytime = parseHeartbeat({ every: '30m', active_hours: '08:00-22:00' }) as HeartbeatSettings;
    const night = parseHeartbeat({ every: '30m', active_hours: '22:00-06:00' }) as HeartbeatSettings;
    const at = (iso: string) => new Date(iso);
    expect(isWithinActiveHours(daytime, at('2026-11-24T07:30:00Z'), 'Europe/Berlin')).toBe(true); // 08:30 in Berlin
    expect(isWithinActiveHours(daytime, at('2026-11-24T07:30:00Z'), 'UTC')).toBe(false);
    expect(isWithinActiveHours(daytime, at('2026-11-24T21:00:00Z'), 'Europe/Berlin')).toBe(false); // 22:00, the end is excluded
    expect(isWithinActiveHours(night, at('2026-11-24T23:30:00Z'), 'UTC')).toBe(true);
    expect(isWithinActiveHours(night, at('2026-11-24T05:59:00Z'), 'UTC')).toBe(true);
    expect(isWithinActiveHours(night, at('2026-11-24T12:00:00Z'), 'UTC')).toBe(false);
    expect(isWithinActiveHours(parseHeartbeat({ every: '1h' }) as HeartbeatSettings, at('2026-11-24T03:00:00Z'), 'UTC')).toBe(true);
  });

  it('loads <id>.heartbeat.md as the profile checklist, never as a profile', async () => {
    directory = await mkdtemp(path.join(os.tmpdir(), 'hearth-heartbeat-profiles-'));
    await writeFile(path.join(directory, 'watcher.md'), profileWith('heartbeat: {every: "30m"}'));
    await writeFile(path.join(directory, 'watcher.heartbeat.md'), '- Is the front door locked?\n- Is the NAS backup fresh?\n');
    await writeFile(path.join(directory, 'plain.md'), '---\nid: plain\nname: Plain\n---\nNo checklist.\n');
    const { profiles, errors } = await loadProfiles(directory);
    expect(errors).toEqual([]);
    expect(profiles.map((profile) => [profile.id, profile.heartbeat_checklist])).toEqual([
      ['plain', undefined],
      ['watcher', '- Is the front door locked?\n- Is the NAS backup fresh?'],
    ]);
  });
});

describe('heartbeat answers', () => {
  it('HEARTBEAT_OK is quiet; anything else is a finding titled by its first line', () => {
    expect(judgeHeartbeatAnswer('HEARTBEAT_OK')).toEqual({ type: 'quiet' });
    expect(judgeHeartbeatAnswer('  HEARTBEAT_OK — all fine')).toEqual({ type: 'quiet' });
    expect(judgeHeartbeatAnswer('The back door is unlocked.\nIt has been open since 21:04.')).toEqual({
      type: 'finding',
      title: 'The back door is unlocked.',
      body: 'It has been open since 21:04.',
    });
    expect(judgeHeartbeatAnswer('All good, HEARTBEAT_OK')).toEqual({ type: 'finding', title: 'All good, HEARTBEAT_OK', body: '' });
    const long = judgeHeartbeatAnswer('x'.repeat(300));
    expect(long.type === 'finding' && [long.title.length, long.body.length]).toEqual([120, 300]);
  });
});

describe('heartbeat runs', () => {
  it('a HEARTBEAT_OK run leaves no trace and raises nothing; a finding notifies, titled by its first line', async () => {
    const server = await startApp({
      profiles: {
        watcher: profileWith('heartbeat: {every: "30m", active_hours: "08:00-22:00"}'),
        'watcher.heartbeat': '- Is the front door locked?\n',
      },
    });
    const page = await EventSocket.connect(`${server.baseUrl.replace('http', 'ws')}/ws/events`);
    const nextNotification = () =>
      page.nextMatching((event) => (event as { type: string }).type === 'notification', 'notification') as unknown as Promise<Extract<HearthEvent, { type: 'notification' }>>;

    server.llm.script({ content: 'HEARTBEAT_OK' });
    const quiet = await server.app.heartbeats.runNow('watcher');
    expect(quiet).toEqual({ status: 'quiet', sessionId: expect.any(String) });
    const prompt = server.llm.requests[0]!.body.messages.at(-1);
    expect(prompt).toMatchObject({ role: 'user' });
    expect(prompt.content).toContain('- Is the front door locked?');
    expect(prompt.content).toContain('HEARTBEAT_OK');
    if (quiet.status !== 'quiet') throw new Error('not quiet');
    const afterQuiet = await server.request('GET', `/sessions/${quiet.sessionId}`);
    expect(afterQuiet.body).toMatchObject({ title: 'Heartbeat: Watcher', profile_id: 'watcher', messages: [] });
    expect((await server.request('GET', '/notifications')).body.notifications).toEqual([]);

    server.llm.script({ content: 'The front door is unlocked.\nIt has been unlocked since 21:04.' });
    const finding = await server.app.heartbeats.runNow('watcher');
    expect(finding).toMatchObject({ status: 'notified', sessionId: quiet.sessionId });
    const announced = await nextNotification();
    expect(announced).toMatchObject({ title: 'The front door is unlocked.', body: 'It has been unlocked since 21:04.', session_id: quiet.sessionId });
    expect((await server.request('GET', '/notifications?unread=1')).body.notifications).toMatchObject([{ id: announced.id, title: 'The front door is unlocked.' }]);
    const messages = (await server.request('GET', `/sessions/${quiet.sessionId}`)).body.messages;
    expect(messages.map((message: { role: string }) => message.role)).toEqual(['user', 'assistant']);
    expect(messages[1].content).toBe('The front door is unlocked.\nIt has been unlocked since 21:04.');
    page.close();
  });

  it('a profile that does not exist is skipped without a run', async () => {
    const server = await startApp();
    expect(await server.app.heartbeats.runNow('nobody')).toEqual({ status: 'skipped', reason: 'unknown_profile' });
    expect(server.llm.requests).toEqual([]);
  });
});

describe('the shipped smart_home heartbeat', () => {
  const documented = 'heartbeat: {every: "30m", active_hours: "08:00-22:00"}';
  const heartbeats = async (server: Hearth) => {
    const { body } = await server.request('GET', '/agents/profiles');
    expect(body.errors).toEqual([]);
    return Object.fromEntries(body.profiles.map((profile: { id: string; heartbeat: unknown }) => [profile.id, profile.heartbeat]));
  };

  it('is off as shipped, with its checklist beside it', async () => {
    const clock = new ManualClock('2026-11-24T09:00:00Z');
    const server = await startApp({ clock, env: { SCHEDULER_TIMEZONE: 'Europe/Berlin' } });
    expect(await heartbeats(server)).toEqual({ secretary: null, server_admin: null, smart_home: null });
    const checklist = (await readFile('profiles/smart_home.heartbeat.md', 'utf8')).trim();
    expect(server.deps.profiles.get('smart_home')?.heartbeat_checklist).toBe(checklist);
    expect(clock.nextTimer()).toBeUndefined();
  });

  it('switched on as README says, GET /agents/profiles shows it and it beats with the checklist', async () => {
    const shipped = await readFile('profiles/smart_home.md', 'utf8');
    expect(shipped).toContain(`# ${documented}\n`);
    const switchedOn = shipped.replace(`# ${documented}`, documented).replace(/^planning_enabled: true$/m, 'planning_enabled: false');
    // 10:00 in Berlin, inside the active hours.
    const clock = new ManualClock('2026-11-24T09:00:00Z');
    const server = await startApp({ clock, env: { SCHEDULER_TIMEZONE: 'Europe/Berlin' }, profiles: { smart_home: switchedOn } });
    expect(await heartbeats(server)).toEqual({ secretary: null, server_admin: null, smart_home: { every: '30m', active_hours: '08:00-22:00' } });
    expect(clock.nextTimer()).toBe('2026-11-24T09:30:00.000Z');

    server.llm.script({ content: 'HEARTBEAT_OK' });
    const beat = once(server.app.heartbeats, 'heartbeat_finished') as Promise<[string, HeartbeatResult]>;
    clock.advanceTo('2026-11-24T09:30:00Z');
    const [profileId, result] = await beat;
    expect([profileId, result.status]).toEqual(['smart_home', 'quiet']);
    const checklist = (await readFile('profiles/smart_home.heartbeat.md', 'utf8')).trim();
    expect(server.llm.requests.at(-1)!.body.messages.at(-1).content).toContain(checklist);
    expect((await server.request('GET', '/notifications')).body.notifications).toEqual([]);
  });

  it('a heartbeat without active hours is listed with active_hours null', async () => {
    const server = await startApp({ profiles: { watcher: profileWith('heartbeat: {every: "2h"}') } });
    expect((await heartbeats(server)).watcher).toEqual({ every: '2h', active_hours: null });
  });
});
