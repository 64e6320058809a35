// Whose a session is, in memory: SessionService on a real SQLite database with a household of
// four roles and a fake AgentRuns — who finds, lists and is told of a session (own, another's,
// shared), profiles a role may not use, the events hub's audiences, guests' sessions expiring, and
// the schedule tool keeping to its conversation's person.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { AgentRuns } from '../../src/agent/agent-runs.ts';
import { HearthEventHub, onlyFor, type Audience, type HearthEvent } from '../../src/events/hearth-events.ts';
import { Household } from '../../src/household/household.ts';
import { createLogger } from '../../src/logger.ts';
import type { Person, Role } from '../../src/people/person.ts';
import { ProfileRegistry } from '../../src/profiles/profile-registry.ts';
import { guestSessionLifetimeMs, removeIdleGuestSessions } from '../../src/sessions/guest-sessions.ts';
import { Scheduler } from '../../src/scheduler/scheduler.ts';
import { SessionService } from '../../src/sessions/session-service.ts';
import { openDatabase, type Db } from '../../src/store/database.ts';
import { MessageImages } from '../../src/store/message-images.ts';
import { appendMessage } from '../../src/store/messages-repository.ts';
import { insertPerson } from '../../src/store/people-repository.ts';
import { listSessionIds } from '../../src/store/sessions-repository.ts';
import { createScheduleTool } from '../../src/tools/builtin/schedule.ts';
import { createSpawnAgentTool } from '../../src/tools/builtin/spawn-agent.ts';
import { createWriteToolTool } from '../../src/tools/builtin/write-tool.ts';
import { ToolRegistry } from '../../src/tools/tool-registry.ts';
import { ManualClock } from '../support/manual-clock.ts';
import { runTool } from '../support/tool-context.ts';

const profile = (id: string, people: string) => `---
id: ${id}
name: ${id}
description: A profile.
people: ${people}
---
Answer.
`;

/** Runs that do nothing but remember which sessions they were told to forget. */
class QuietRuns implements AgentRuns {
  readonly forgotten: string[] = [];
  send() {
    return { ok: true, outcome: Promise.resolve({ status: 'completed', content: 'Done.', contextTokens: 1 } as const) } as const;
  }
  regenerate() {
    return this.send();
  }
  edit() {
    return this.send();
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
    this.forgotten.push(sessionId);
  }
  tell() {}
}

let folder: string;
let db: Db;
let runs: QuietRuns;
let published: Array<{ event: HearthEvent; audience: Audience | undefined }>;
let service: SessionService;
const people = {} as Record<Role | 'otherAdult', Person>;

beforeEach(async () => {
  folder = await mkdtemp(path.join(tmpdir(), 'hearth-session-privacy-'));
  await writeFile(path.join(folder, 'everyone.md'), profile('everyone', '[owner, adult, child, guest]'));
  await writeFile(path.join(folder, 'grown.md'), profile('grown', '[owner, adult]'));
  db = await openDatabase(':memory:');
  const household = new Household(db);
  people.owner = await household.firstOwner();
  for (const role of ['adult', 'child', 'guest'] as const) people[role] = await insertPerson(db, { name: `The ${role}`, role, passphraseHash: null });
  people.otherAdult = await insertPerson(db, { name: 'Another adult', role: 'adult', passphraseHash: null });
  household.changed();
  runs = new QuietRuns();
  published = [];
  service = new SessionService({
    db,
    profiles: await ProfileRegistry.open(folder),
    runs,
    approvals: { decide: () => ({ decided: false, reason: 'not_found' }), mayDecide: () => undefined, pendingFor: () => [], on: () => {} },
    household,
    filesDirectory: path.join(folder, 'session-files'),
    images: new MessageImages(path.join(folder, 'images')),
    events: { publish: (event, audience) => published.push({ event, audience }) },
  });
});

afterEach(async () => {
  await db.destroy();
  await rm(folder, { recursive: true, force: true });
});

/** A session of `person` with one displayed message (a session without one is not listed). */
async function sessionOf(person: Person, options: { profileId?: string; shared?: boolean } = {}): Promise<string> {
  const created = await service.create({ profileId: options.profileId ?? 'everyone', personId: person.id });
  if (!created.ok) throw new Error(created.message);
  const sessionId = created.session.id;
  await appendMessage(db, sessionId, { role: 'user', content: 'Hello' }, ['display']);
  if (options.shared) await service.update(sessionId, { shared: true });
  return sessionId;
}

const seers = async (sessionId: string) => {
  const seeing = [];
  for (const [who, person] of Object.entries(people)) if (await service.findFor(person, sessionId)) seeing.push(who);
  return seeing.sort();
};
const listers = async (sessionId: string) => {
  const listing = [];
  for (const [who, person] of Object.entries(people)) if ((await service.listFor(person)).some((session) => session.id === sessionId)) listing.push(who);
  return listing.sort();
};

describe('whose a session is', () => {
  it('is found and listed by its person only: the owner and another adult find it as a missing one', async () => {
    const sessionId = await sessionOf(people.adult);
    expect(await seers(sessionId)).toEqual(['adult']);
    expect(await listers(sessionId)).toEqual(['adult']);
    expect(await service.find(sessionId)).toBeDefined();
  });

  it('shared, is seen and listed by everyone whose role may use its profile', async () => {
    const forEveryone = await sessionOf(people.adult, { shared: true });
    expect(await seers(forEveryone)).toEqual(['adult', 'child', 'guest', 'otherAdult', 'owner']);
    expect(await listers(forEveryone)).toEqual(['adult', 'child', 'guest', 'otherAdult', 'owner']);
    const forGrownUps = await sessionOf(people.adult, { profileId: 'grown', shared: true });
    expect(await seers(forGrownUps)).toEqual(['adult', 'otherAdult', 'owner']);
    expect(await listers(forGrownUps)).toEqual(['adult', 'otherAdult', 'owner']);
  });

  it("made private again, is its person's alone once more", async () => {
    const sessionId = await sessionOf(people.owner, { shared: true });
    await service.update(sessionId, { shared: false });
    expect(await seers(sessionId)).toEqual(['owner']);
  });

  it("news of it reaches those who may see it now (seenBy), and its deletion those who could", async () => {
    const sessionId = await sessionOf(people.adult);
    const seenBy = service.seenBy(sessionId);
    expect([await seenBy(people.adult), await seenBy(people.owner), await seenBy(people.child)]).toEqual([true, false, false]);
    await service.update(sessionId, { shared: true });
    expect([await seenBy(people.owner), await seenBy(people.child)]).toEqual([true, true]);
    await service.update(sessionId, { shared: false });

    published = [];
    expect(await service.delete(sessionId)).toBe(true);
    const [deleted] = published;
    expect(deleted?.event).toEqual({ type: 'sessions_changed', session_id: sessionId, change: 'deleted' });
    // A lookup finds nothing now; the deletion's audience answers from the session as it was.
    expect(await seenBy(people.adult)).toBe(false);
    expect([deleted!.audience!(people.adult), deleted!.audience!(people.owner), deleted!.audience!(people.otherAdult)]).toEqual([true, false, false]);
  });
});

describe('profiles a role may not use', () => {
  it('a session is not created under one, and the refusal says who may', async () => {
    const before = await listSessionIds(db);
    const created = await service.create({ profileId: 'grown', personId: people.child.id });
    expect(created).toEqual({ ok: false, code: 'forbidden', message: 'The child (child) may not use the profile "grown": it is for owner, adult.' });
    expect(await listSessionIds(db)).toEqual(before);
    expect((await service.create({ profileId: 'grown', personId: people.adult.id })).ok).toBe(true);
    // A session that names nobody is the first owner's, who may use every profile.
    expect((await service.create({ profileId: 'grown' })).ok).toBe(true);
  });

  it('a session that names no profile gets the default, or the first the person may use when the default is not theirs', async () => {
    const guests = await service.create({ personId: people.guest.id });
    expect(guests.ok && guests.session.profileId).toBe('everyone');
    expect(service.defaultProfileFor(people.adult)).toBe(service.defaultProfileId);
  });

  it('a session is not switched to one, whether the person or the model asks', async () => {
    const sessionId = await sessionOf(people.child);
    expect(await service.switchProfile(sessionId, 'grown', 'agent')).toMatchObject({ ok: false, code: 'forbidden' });
    expect(await service.update(sessionId, { profileId: 'grown', title: 'Renamed' })).toMatchObject({ ok: false, code: 'forbidden' });
    expect((await service.find(sessionId))?.profileId).toBe('everyone');
    expect(runs.forgotten).toEqual([]);
    const grownUps = await sessionOf(people.adult);
    expect(await service.switchProfile(grownUps, 'grown', 'agent')).toMatchObject({ ok: true, switched: true });
  });

  it('mayUseProfile: the owner every one, anyone else those naming their role, an unknown one by the default rule', () => {
    const may = (who: keyof typeof people, profileId: string) => service.mayUseProfile(people[who], profileId);
    expect([may('owner', 'grown'), may('adult', 'grown'), may('child', 'grown'), may('guest', 'everyone')]).toEqual([true, true, false, true]);
    expect([may('adult', 'no-such-profile'), may('child', 'no-such-profile')]).toEqual([true, false]);
  });
});

describe("guests' sessions", () => {
  it('are removed a day after their last activity, through the service; others and fresh ones stay', async () => {
    const idle = await sessionOf(people.guest);
    const fresh = await sessionOf(people.guest);
    const adults = await sessionOf(people.adult);
    const longAgo = new Date(Date.now() - guestSessionLifetimeMs - 60_000).toISOString();
    await db.updateTable('sessions').set({ last_active: longAgo }).where('id', 'in', [idle, adults]).execute();

    expect(await removeIdleGuestSessions(db, service, createLogger('silent'))).toBe(1);
    expect((await listSessionIds(db)).sort()).toEqual([fresh, adults].sort());
    // Deleted as any session is: its runs forgotten first, its pages told.
    expect(runs.forgotten).toEqual([idle]);
    expect(published.map(({ event }) => event)).toContainEqual({ type: 'sessions_changed', session_id: idle, change: 'deleted' });
  });
});

describe('the events hub', () => {
  it("sends each subscriber only what its audience admits, in the order published even when an audience answers later", async () => {
    const hub = new HearthEventHub();
    const toAdult: HearthEvent[] = [];
    const toChild: HearthEvent[] = [];
    let answer: (admitted: boolean) => void = () => undefined;
    const later = new Promise<boolean>((resolve) => (answer = resolve));
    hub.subscribeFor(people.adult, (event) => toAdult.push(event));
    hub.subscribeFor(people.child, (event) => toChild.push(event));

    const first: HearthEvent = { type: 'sessions_changed', session_id: 'first', change: 'updated' };
    const second: HearthEvent = { type: 'profiles_changed', profiles: [] };
    const third: HearthEvent = { type: 'notification', id: 1, title: 'Yours', body: '', created_at: '' };
    hub.publish(first, (person) => (person.id === people.adult.id ? later : false));
    hub.publish(second);
    hub.publish(third, onlyFor(people.adult.id));
    // The child's page had nothing waiting: what is theirs went at once.
    expect(toChild).toEqual([second]);
    // The adult's page waits for the first event's answer before sending what followed it.
    expect(toAdult).toEqual([]);
    answer(true);
    await new Promise((resolve) => setImmediate(resolve));
    expect(toAdult).toEqual([first, second, third]);
  });

  it('gives an event published without an audience the one `audienceOf` names, and stops at unsubscribe', async () => {
    const hub = new HearthEventHub();
    const told: HearthEvent[] = [];
    const unsubscribe = hub.subscribeFor(people.owner, (event) => told.push(event), (event) =>
      event.type === 'sessions_changed' ? (person) => person.id === event.session_id : undefined,
    );
    hub.publish({ type: 'sessions_changed', session_id: people.adult.id, change: 'updated' });
    hub.publish({ type: 'sessions_changed', session_id: people.owner.id, change: 'updated' });
    unsubscribe();
    hub.publish({ type: 'profiles_changed', profiles: [] });
    expect(told).toEqual([{ type: 'sessions_changed', session_id: people.owner.id, change: 'updated' }]);
  });
});

describe('the schedule tool', () => {
  it("creates, lists and changes only the schedules of the person whose conversation it is", async () => {
    const scheduler = new Scheduler({
      db,
      sessions: service,
      clock: new ManualClock('2026-11-24T07:00:00Z'),
      defaultTimezone: () => 'UTC',
      logger: createLogger('silent'),
      maxConcurrentRuns: 1,
    });
    const adultsConversation = await sessionOf(people.adult);
    const ownersConversation = await sessionOf(people.owner);
    const tool = createScheduleTool({ sessions: () => service, schedules: () => scheduler });
    const run = (sessionId: string, args: Record<string, unknown>) => runTool(tool, args, { sessionId });

    expect((await run(adultsConversation, { action: 'create', name: 'Plants', prompt: 'Water the plants', every: '1d' })).success).toBe(true);
    expect((await run(ownersConversation, { action: 'create', name: 'Backups', prompt: 'Check the backups', every: '1d' })).success).toBe(true);
    const [plants, backups] = scheduler.list();
    expect([plants?.personId, backups?.personId]).toEqual([people.adult.id, people.owner.id]);

    const listed = await run(adultsConversation, { action: 'list' });
    expect(listed.output).toContain('Plants');
    expect(listed.output).not.toContain('Backups');
    // Someone else's schedule is a missing one, for the owner's conversation too.
    expect(await run(adultsConversation, { action: 'cancel', id: backups!.id })).toMatchObject({ success: false, output: expect.stringContaining(`No schedule ${backups!.id}`) });
    expect(await run(ownersConversation, { action: 'pause', id: plants!.id })).toMatchObject({ success: false });
    expect(scheduler.list().map((schedule) => [schedule.name, schedule.enabled])).toEqual([['Plants', true], ['Backups', true]]);
    scheduler.stop();
  });

  it("makes a schedule only under a profile its person may use, and touches none in a session shared with the household", async () => {
    const scheduler = new Scheduler({
      db,
      sessions: service,
      clock: new ManualClock('2026-11-24T07:00:00Z'),
      defaultTimezone: () => 'UTC',
      logger: createLogger('silent'),
      maxConcurrentRuns: 1,
    });
    const household = new Household(db);
    const profiles = await ProfileRegistry.open(folder);
    const tool = createScheduleTool({ sessions: () => service, schedules: () => scheduler, profiles, person: (id) => household.person(id) });
    const run = (sessionId: string, args: Record<string, unknown>) => runTool(tool, args, { sessionId });

    const childsConversation = await sessionOf(people.child);
    const refused = await run(childsConversation, { action: 'create', name: 'Disks', prompt: 'Check the disks', every: '1d', profile: 'grown' });
    expect(refused).toMatchObject({ success: false, output: expect.stringContaining('may not use the profile "grown"') });
    expect((await run(childsConversation, { action: 'create', name: 'Teeth', prompt: 'Brush your teeth', every: '1d' })).success).toBe(true);

    const adultsShared = await sessionOf(people.adult, { shared: true });
    await run(await sessionOf(people.adult), { action: 'create', name: 'Doctor', prompt: 'The doctor at 9', every: '1d' });
    const doctor = scheduler.list().find((schedule) => schedule.name === 'Doctor')!;
    for (const args of [{ action: 'list' }, { action: 'cancel', id: doctor.id }, { action: 'create', name: 'Sneaky', prompt: 'Hello', every: '1h' }]) {
      expect(await run(adultsShared, args)).toMatchObject({ success: false, output: expect.stringContaining('shared with the household keeps no schedules') });
    }
    expect(scheduler.list().map((schedule) => schedule.name)).toEqual(['Teeth', 'Doctor']);
    scheduler.stop();
  });
});

describe('the spawn_agent tool', () => {
  it("starts a sub-agent only under a profile the conversation's person may use, and in a shared session only under its own", async () => {
    const household = new Household(db);
    const profiles = await ProfileRegistry.open(folder);
    const started: string[] = [];
    const tool = createSpawnAgentTool(async (_task, profileId) => {
      started.push(profileId ?? 'its own');
      return 'Done.';
    }, { sessions: () => service, profiles, person: (id) => household.person(id) });
    const spawn = (sessionId: string, profileId?: string) => runTool(tool, { task: 'Look around', ...(profileId && { profile_id: profileId }) }, { sessionId });

    expect(await spawn(await sessionOf(people.child), 'grown')).toMatchObject({ success: false, output: expect.stringContaining('may not use the profile "grown"') });
    expect(await spawn(await sessionOf(people.guest), 'grown')).toMatchObject({ success: false });
    expect(await spawn(await sessionOf(people.adult, { shared: true }), 'grown')).toMatchObject({ success: false, output: expect.stringContaining('shared with the household') });
    expect(started).toEqual([]);
    expect((await spawn(await sessionOf(people.child))).success).toBe(true);
    expect((await spawn(await sessionOf(people.adult, { shared: true }), 'everyone')).success).toBe(true);
    expect((await spawn(await sessionOf(people.adult), 'grown')).success).toBe(true);
    expect(started).toEqual(['its own', 'everyone', 'grown']);
  });
});

describe('the write_tool tool', () => {
  it("installs a tool only from an owner's own conversation: a tool runs in everyone's sessions", async () => {
    const household = new Household(db);
    // Without a user-tool manager, a call that passes the check is told user tools are off: that answer marks it passed.
    const tool = createWriteToolTool({
      registry: new ToolRegistry([]),
      toolsDir: path.join(folder, 'user-tools'),
      userTools: () => undefined,
      toolSwitches: () => undefined,
      reach: { sessions: () => service, person: (id) => household.person(id) },
    });
    const write = async (sessionId: string) => (await runTool(tool, { name: 'fetch_grades', code: 'export default {}' }, { sessionId })).output;
    for (const role of ['adult', 'child', 'guest'] as const) expect(await write(await sessionOf(people[role]))).toMatch(/^Only an owner installs tools/);
    expect(await write(await sessionOf(people.owner, { shared: true }))).toMatch(/shared with the household/);
    expect(await write(await sessionOf(people.owner))).toBe('User tools are not available on this server.');
  });
});
