import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Accounts } from '../../src/household/accounts.ts';
import { Household } from '../../src/household/household.ts';
import type { Caller, Person } from '../../src/people/person.ts';
import { openDatabase, type Db } from '../../src/store/database.ts';
import { ManualClock } from '../support/manual-clock.ts';

// Which open sockets each ending reaches, on `:memory:` SQLite: the callers are those the household's
// own credentials give, and a socket listens as `accounts.ends.whenEnded(caller, …)`.

let db: Db;
let accounts: Accounts;

beforeEach(async () => {
  db = await openDatabase(':memory:');
  accounts = new Accounts({ db, household: new Household(db), clock: new ManualClock('2026-11-28T12:00:00.000Z'), logger: { warn: () => undefined, info: () => undefined } as never });
});
afterEach(async () => {
  await db.destroy();
});

async function person(name: string, role: Person['role'] = 'adult'): Promise<Person> {
  const added = await accounts.people.add({ name, role, passphrase: `passphrase of ${name}` });
  if (!added.ok) throw new Error(added.message);
  return added.person;
}

/** Ada's ways in: two sign-ins (a laptop, a phone) and a personal token, each as identify() finds it. */
async function ways(ada: Person) {
  const laptopSecret = await accounts.signIns.start(ada.id, '192.0.2.1');
  const phoneSecret = await accounts.signIns.start(ada.id, '192.0.2.2');
  const { token, id: tokenId } = await accounts.tokens.create(ada.id, 'script');
  const callers = {
    laptop: (await accounts.signIns.caller(laptopSecret))!,
    phone: (await accounts.signIns.caller(phoneSecret))!,
    token: (await accounts.tokens.caller(token))!,
  };
  return { laptopSecret, phoneSecret, tokenId, callers };
}

/** Which of the callers' sockets an action ends, as each would have listened. */
async function endedBy(callers: Record<string, Caller>, action: () => Promise<unknown>): Promise<string[]> {
  const ends: string[] = [];
  const stops = Object.entries(callers).map(([name, caller]) => accounts.ends.whenEnded(caller, () => ends.push(name)));
  await action();
  for (const stop of stops) stop();
  return ends;
}

describe('the ways in that end, and what was opened with them', () => {
  it('signing out ends that sign-in alone; everywhere ends every sign-in and leaves the token', async () => {
    const ada = await person('Ada');
    const bob = await person('Bob');
    const { laptopSecret, phoneSecret, callers } = await ways(ada);
    const bobs = await ways(bob);
    expect(await endedBy({ ...callers, bob: bobs.callers.laptop }, () => accounts.signIns.signOut(laptopSecret, false))).toEqual(['laptop']);
    expect(await endedBy({ ...callers, bob: bobs.callers.laptop }, () => accounts.signIns.signOut(phoneSecret, true))).toEqual(['laptop', 'phone']);
    // An unknown or already ended cookie ends nothing.
    expect(await endedBy(callers, () => accounts.signIns.signOut(laptopSecret, true))).toEqual([]);
  });

  it('a revoked token ends what it opened; another person cannot revoke it', async () => {
    const ada = await person('Ada');
    const bob = await person('Bob');
    const { tokenId, callers } = await ways(ada);
    expect(await endedBy(callers, () => accounts.tokens.revoke(bob.id, tokenId))).toEqual([]);
    expect(await endedBy(callers, () => accounts.tokens.revoke(ada.id, tokenId))).toEqual(['token']);
  });

  it('a new passphrase ends the sign-ins; a new role or removal ends everything of theirs; a new name ends nothing', async () => {
    const ada = await person('Ada');
    const { callers } = await ways(ada);
    expect(await endedBy(callers, () => accounts.people.update(ada.id, { name: 'Ada L.' }))).toEqual([]);
    expect(await endedBy(callers, () => accounts.people.update(ada.id, { role: 'adult' }))).toEqual([]);
    expect(await endedBy(callers, () => accounts.people.update(ada.id, { passphrase: 'a new passphrase of Ada' }))).toEqual(['laptop', 'phone']);
    expect(await endedBy(callers, () => accounts.people.update(ada.id, { role: 'child' }))).toEqual(['laptop', 'phone', 'token']);
    expect(await endedBy(callers, () => accounts.people.remove(ada.id))).toEqual(['laptop', 'phone', 'token']);
  });
});
