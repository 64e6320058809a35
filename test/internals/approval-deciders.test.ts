// Who decides an approval in a household, on the real gate over an in-memory database with the
// shipped profiles: the decision table (each role × whose run asks × the profile's approvers), what
// each person is told of waiting calls, the audit's who-asked / who-decided / where, and the
// notifications a child's ask raises for those who may decide it.
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ApprovalGate, type Authorization } from '../../src/agent/approval-gate.ts';
import { notifyUnwatchedApprovals } from '../../src/agent/unwatched-approvals.ts';
import { buildPolicy, type ApprovalPolicy } from '../../src/approvals/policy.ts';
import { HearthEventHub, type PendingApprovalSummary } from '../../src/events/hearth-events.ts';
import { Notifications } from '../../src/events/notifications.ts';
import { Household } from '../../src/household/household.ts';
import { packageRoot } from '../../src/package-root.ts';
import type { Person, Role } from '../../src/people/person.ts';
import { ProfileRegistry } from '../../src/profiles/profile-registry.ts';
import { listApprovals } from '../../src/store/approvals-repository.ts';
import { openDatabase, type Db } from '../../src/store/database.ts';
import { insertPerson } from '../../src/store/people-repository.ts';
import { createSession } from '../../src/store/sessions-repository.ts';
import type { Tool } from '../../src/tools/tool.ts';
import { recordingLogger } from '../support/recording-logger.ts';

const shippedProfiles = ProfileRegistry.open(path.join(packageRoot, 'profiles'));

const askEveryCall = (() => {
  const built = buildPolicy({ default: 'ask' });
  if (typeof built === 'string') throw new Error(built);
  return built;
})() satisfies ApprovalPolicy;

const shell: Tool<{ command: string }> = {
  name: 'shell',
  description: 'Runs a command.',
  parameters: { type: 'object', properties: { command: { type: 'string' } }, required: ['command'] },
  subject: (args) => args.command,
  commandSubject: true,
  execute: async () => 'ran',
};

let db: Db;
let gate: ApprovalGate;
let owner: Person;
const people: Record<'adult' | 'otherAdult' | 'child' | 'otherChild' | 'guest', Person> = {} as never;
beforeEach(async () => {
  db = await openDatabase(':memory:');
  const household = new Household(db);
  owner = await household.firstOwner();
  const add = (name: string, role: Role) => insertPerson(db, { name, role, passphraseHash: null });
  people.adult = await add('Ada', 'adult');
  people.otherAdult = await add('Bea', 'adult');
  people.child = await add('Cal', 'child');
  people.otherChild = await add('Dot', 'child');
  people.guest = await add('Gus', 'guest');
  household.changed();
  gate = new ApprovalGate(db, 60_000, recordingLogger().logger, { household, profiles: await shippedProfiles });
});
let asked: Promise<Authorization>[] = [];
afterEach(async () => {
  // Calls left waiting are denied as stopped, and recorded so, before the database goes.
  gate.close();
  await Promise.all(asked.splice(0));
  await db.destroy();
});

let calls = 0;
/** A call in a new session of `asker` under `profileId` (by a sub-agent under `subagentProfileId`), waiting once the gate announces it. */
async function ask(
  asker: Person,
  profileId: string,
  command = 'make deploy',
  subagentProfileId?: string,
): Promise<{ summary: PendingApprovalSummary; authorization: Promise<Authorization> }> {
  const session = await createSession(db, { profileId, personId: asker.id });
  const required = new Promise<PendingApprovalSummary>((resolve) => gate.once('required', resolve));
  const context = { sessionId: session.id, signal: new AbortController().signal, emit: () => undefined, isSubagent: subagentProfileId !== undefined, sessionProfileId: profileId };
  const authorization = gate.authorize({
    callId: `call-${++calls}`,
    tool: shell,
    args: { command },
    policies: [askEveryCall],
    context,
    profileId: subagentProfileId ?? profileId,
  });
  asked.push(authorization);
  return { summary: await required, authorization };
}

// Each decider's own run, a child's and another adult's, under each shipped profile's approvers:
// secretary [owner, adult], server_admin [owner], smart_home [owner, adult].
const table = `
  decider | whose run asks  | secretary | server_admin | smart_home
  owner   | own             | yes       | yes          | yes
  owner   | a child's       | yes       | yes          | yes
  owner   | another adult's | no        | yes          | no
  adult   | own             | yes       | no           | yes
  adult   | a child's       | yes       | no           | yes
  adult   | another adult's | no        | no           | no
  child   | own             | no        | no           | no
  child   | a child's       | no        | no           | no
  child   | another adult's | no        | no           | no
  guest   | own             | no        | no           | no
  guest   | a child's       | no        | no           | no
  guest   | another adult's | no        | no           | no
`;
const [header, ...rows] = table
  .trim()
  .split('\n')
  .map((line) => line.split('|').map((cell) => cell.trim()));
const profileIds = header!.slice(2);

describe('who may decide a waiting call', () => {
  for (const [role, whose, ...answers] of rows) {
    it(`${role} deciding ${whose} run: ${profileIds.map((profileId, index) => `${profileId} ${answers[index]}`).join(', ')}`, async () => {
      const decider = role === 'owner' ? owner : role === 'adult' ? people.adult : role === 'child' ? people.child : people.guest;
      const asker = whose === 'own' ? decider : whose === "a child's" ? people.otherChild : people.otherAdult;
      for (const [index, profileId] of profileIds.entries()) {
        const { summary, authorization } = await ask(asker, profileId!);
        const may = answers[index] === 'yes';
        expect(gate.mayDecide(summary.session_id, summary.call_id, decider), profileId).toBe(may);
        const outcome = gate.decide(summary.session_id, summary.call_id, { decision: 'allow', decider, via: 'rest' });
        if (may) {
          expect(outcome, profileId).toEqual({ decided: true });
          expect(await authorization).toEqual({ allowed: true });
        } else {
          expect(outcome, profileId).toEqual({ decided: false, reason: 'forbidden', deciders: summary.deciders });
          // Refused, nothing decided: the call still waits, and only someone who may decides it.
          expect(gate.pending().map((waiting) => waiting.call_id)).toContain(summary.call_id);
          // Another adult's own call is theirs to settle; anything else, the owner's.
          const settler = gate.mayDecide(summary.session_id, summary.call_id, owner) ? owner : asker;
          expect(gate.decide(summary.session_id, summary.call_id, { decision: 'deny', decider: settler, via: 'page' })).toEqual({ decided: true });
          expect(await authorization).toMatchObject({ allowed: false });
        }
      }
    });
  }
});

describe('what each person is told of a waiting call', () => {
  it("names who asked and who may decide: a child's secretary ask waits for the owner and the adults, a server_admin one for the owner", async () => {
    // People who joined in the same millisecond may come in either order.
    const names = (list: readonly { name: string }[]) => list.map((person) => person.name).sort();
    const secretary = await ask(people.child, 'secretary');
    expect(secretary.summary).toMatchObject({ asked_by: { id: people.child.id, name: 'Cal' }, reason: 'rule default' });
    expect(names(secretary.summary.deciders)).toEqual(['Ada', 'Bea', 'Owner']);
    const serverAdmin = await ask(people.child, 'server_admin');
    expect(serverAdmin.summary.deciders).toEqual([{ id: owner.id, name: 'Owner' }]);
    // An adult's own secretary ask is theirs alone to decide, and to see: not the owner's.
    const adultsOwn = await ask(people.adult, 'secretary');
    expect(names(adultsOwn.summary.deciders)).toEqual(['Ada']);

    const seenBy = (person: Person) => gate.pendingFor(person).map((view) => [view.call_id, view.can_decide]);
    // The child sees their own asks waiting, without the right to decide them.
    expect(seenBy(people.child)).toEqual([
      [secretary.summary.call_id, false],
      [serverAdmin.summary.call_id, false],
    ]);
    // An adult: the child's secretary ask to decide and their own; not the child's server_admin ask, nor another adult's.
    expect(seenBy(people.adult)).toEqual([
      [secretary.summary.call_id, true],
      [adultsOwn.summary.call_id, true],
    ]);
    expect(seenBy(people.otherAdult)).toEqual([[secretary.summary.call_id, true]]);
    expect(seenBy(owner)).toEqual([
      [secretary.summary.call_id, true],
      [serverAdmin.summary.call_id, true],
    ]);
    expect(seenBy(people.guest)).toEqual([]);
    expect(seenBy(people.otherChild)).toEqual([]);
  });

  it("a sub-agent's call waits for those both its profile and its session's name: the stricter approvers win", async () => {
    // The child's smart_home session (approvers owner, adult) spawned a server_admin sub-agent (approvers owner).
    const { summary } = await ask(people.child, 'smart_home', 'rm -rf /srv/cache', 'server_admin');
    expect(summary.deciders).toEqual([{ id: owner.id, name: owner.name }]);
    expect(gate.mayDecide(summary.session_id, summary.call_id, people.adult)).toBe(false);
    expect(gate.mayDecide(summary.session_id, summary.call_id, owner)).toBe(true);
    const inSecretary = await ask(people.child, 'smart_home', 'make notes', 'secretary');
    expect(gate.mayDecide(inSecretary.summary.session_id, inSecretary.summary.call_id, people.adult)).toBe(true);
  });

  it('a call whose session names nobody who lives here waits for the owner alone', async () => {
    const { summary } = await ask({ ...people.adult, id: 'someone-who-left' }, 'secretary');
    expect(summary).toMatchObject({ asked_by: null, deciders: [{ id: owner.id, name: owner.name }] });
    expect(gate.mayDecide(summary.session_id, summary.call_id, people.adult)).toBe(false);
    expect(gate.mayDecide(summary.session_id, summary.call_id, owner)).toBe(true);
  });
});

describe('the audit of a household', () => {
  it('records who asked, the roles that could decide, who decided and where', async () => {
    const { summary, authorization } = await ask(people.child, 'secretary', 'rm -rf build');
    gate.decide(summary.session_id, summary.call_id, { decision: 'allow', decider: people.adult, via: 'telegram' });
    await authorization;
    const [record] = await listApprovals(db, { status: 'all', limit: 10 });
    expect(record).toMatchObject({
      subject: 'rm -rf build',
      decision: 'allow',
      decidedBy: 'user',
      askedBy: people.child.id,
      approvers: ['owner', 'adult'],
      deciderId: people.adult.id,
      decidedVia: 'telegram',
    });
  });
});

describe("notifications of a child's ask", () => {
  it('go at once to each person who may decide it, watched or not; an adult watching their own run gets none', async () => {
    const events = new HearthEventHub();
    const notifications = new Notifications(db, events);
    notifyUnwatchedApprovals({ db, approvals: gate, notifications, isWatched: () => true, logger: recordingLogger().logger });
    let raised = 0;
    const threeRaised = new Promise<void>((resolve) =>
      events.subscribe((event) => {
        if (event.type === 'notification' && ++raised === 3) resolve();
      }),
    );
    await ask(people.adult, 'secretary');
    await ask(people.child, 'secretary', 'make garden-lights');
    await threeRaised;
    const of = async (person: Person) =>
      (await db.selectFrom('notifications').select(['title', 'body']).where('person_id', '=', person.id).execute()).map((notification) => [notification.title, notification.body]);
    const told = [['Cal asks to run shell: it waits for your decision', 'make garden-lights']];
    expect(await of(owner)).toEqual(told);
    expect(await of(people.adult)).toEqual(told);
    expect(await of(people.otherAdult)).toEqual(told);
    expect(await of(people.child)).toEqual([]);
    expect(await of(people.guest)).toEqual([]);
  });
});
