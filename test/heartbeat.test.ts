import { once } from 'node:events';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { judgeHeartbeatAnswer } from '../src/agent/heartbeat.ts';
import type { HeartbeatResult } from '../src/scheduler/heartbeat-run.ts';
import { isWithinActiveHours, parseHeartbeat, type HeartbeatSettings } from '../src/profiles/heartbeat-settings.ts';
import { loadProfiles, parseProfile } from '../src/profiles/load-profiles.ts';
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

function nextProfilesChanged(server: Hearth): Promise<void> {
  return new Promise((resolve) => {
    const unsubscribe = server.deps.events.subscribe((event) => {
      if (event.type !== 'profiles_changed') return;
      unsubscribe();
      resolve();
    });
  });
}

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

  it('switched on as docs/agent.md says, GET /agents/profiles shows it (one without active hours with null); it beats with the checklist, leaves a quiet answer no trace, and re-arms when its file changes', async () => {
    const shipped = await readFile('profiles/smart_home.md', 'utf8');
    expect(shipped).toContain(`# ${documented}\n`);
    const switchedOn = shipped.replace(`# ${documented}`, documented).replace(/^planning_enabled: true$/m, 'planning_enabled: false');
    // 10:00 in Berlin, inside the active hours.
    const clock = new ManualClock('2026-11-24T09:00:00Z');
    const server = await startApp({
      clock,
      env: { SCHEDULER_TIMEZONE: 'Europe/Berlin' },
      profiles: { smart_home: switchedOn, watcher: profileWith('heartbeat: {every: "2h"}') },
    });
    expect(await heartbeats(server)).toEqual({
      secretary: null,
      server_admin: null,
      smart_home: { every: '30m', active_hours: '08:00-22:00' },
      watcher: { every: '2h', active_hours: null },
    });
    expect(clock.nextTimer()).toBe('2026-11-24T09:30:00.000Z');

    server.llm.script({ content: 'HEARTBEAT_OK' });
    const beat = once(server.app.heartbeats, 'heartbeat_finished') as Promise<[string, HeartbeatResult]>;
    clock.advanceTo('2026-11-24T09:30:00Z');
    const [profileId, result] = await beat;
    expect([profileId, result.status]).toEqual(['smart_home', 'quiet']);
    const checklist = (await readFile('profiles/smart_home.heartbeat.md', 'utf8')).trim();
    expect(server.llm.requests.at(-1)!.body.messages.at(-1).content).toContain(checklist);
    expect((await server.request('GET', '/notifications')).body.notifications).toEqual([]);
    if (result.status !== 'quiet') throw new Error('not quiet');
    expect((await server.request('GET', `/sessions/${result.sessionId}`)).body).toMatchObject({ title: 'Heartbeat: Smart Home Assistant', profile_id: 'smart_home', messages: [] });
    expect(clock.nextTimer()).toBe('2026-11-24T10:00:00.000Z');

    // Every hour from now (10:30 in Berlin), before the watcher's 11:00 re-armed from now too.
    const changed = nextProfilesChanged(server);
    await writeFile(path.join(server.config.PROFILES_DIR, 'smart_home.md'), switchedOn.replace('every: "30m"', 'every: "1h"'));
    await changed;
    expect(clock.nextTimer()).toBe('2026-11-24T10:30:00.000Z');
  });
});
