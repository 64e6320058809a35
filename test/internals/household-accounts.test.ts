import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Accounts } from '../../src/household/accounts.ts';
import { Household } from '../../src/household/household.ts';
import { hashPassphrase, verifyPassphrase } from '../../src/household/passphrase.ts';
import { SignInThrottle, defaultThrottleSettings } from '../../src/household/sign-in-throttle.ts';
import type { Person } from '../../src/people/person.ts';
import { openDatabase, type Db } from '../../src/store/database.ts';
import { ManualClock } from '../support/manual-clock.ts';
import { softwarePasskey } from '../support/software-passkey.ts';

// The household service on `:memory:` SQLite: sign-ins, tokens, invitations, people, the slowing of failures.

const day = 24 * 60 * 60_000;
/** A 32nd of the shipped scrypt cost, for the many passphrases these tests choose. */
const cheapCost = { N: 2 ** 10, r: 8, p: 1 };
let db: Db;
let clock: ManualClock;
let household: Household;
let accounts: Accounts;
let warnings: unknown[];

beforeEach(async () => {
  db = await openDatabase(':memory:');
  clock = new ManualClock('2026-11-28T12:00:00.000Z');
  household = new Household(db);
  warnings = [];
  accounts = new Accounts({ db, household, clock, logger: { warn: (fields: unknown) => void warnings.push(fields), info: () => undefined } as never, passphraseCost: cheapCost });
});
afterEach(async () => {
  await db.destroy();
});

function later(milliseconds: number): void {
  clock.advanceTo(new Date(clock.now().getTime() + milliseconds));
}

async function person(name: string, role: Person['role'] = 'adult', passphrase = `passphrase of ${name}`): Promise<Person> {
  const added = await accounts.people.add({ name, role, passphrase });
  if (!added.ok) throw new Error(added.message);
  return added.person;
}

describe('passphrases', () => {
  it('are stored as scrypt with their settings and salt, and checked against them', async () => {
    const stored = await hashPassphrase('correct horse battery');
    expect(stored).toMatch(/^scrypt\$32768\$8\$1\$[A-Za-z0-9_-]{22}\$[A-Za-z0-9_-]{43}$/);
    expect(await hashPassphrase('correct horse battery')).not.toBe(stored);
    expect(await verifyPassphrase('correct horse battery', stored)).toBe(true);
    expect(await verifyPassphrase('correct horse batterY', stored)).toBe(false);
    expect(await verifyPassphrase('correct horse battery', null)).toBe(false);
    expect(await verifyPassphrase('correct horse battery', 'plain text')).toBe(false);
  });

  it('are hashed at the cost the accounts were given, and one chosen at another cost still signs in', async () => {
    const cheap = await person('Ada', 'adult', 'a cheap passphrase');
    const stored = await db.selectFrom('people').select('passphrase_hash').where('id', '=', cheap.id).executeTakeFirstOrThrow();
    expect(stored.passphrase_hash).toMatch(/^scrypt\$1024\$8\$1\$/);
    const shipped = new Accounts({ db, household, clock, logger: { warn: () => undefined, info: () => undefined } });
    expect(await shipped.signIns.signIn('Ada', 'a cheap passphrase', '10.0.0.2')).toMatchObject({ ok: true });
    const changed = await shipped.people.update(cheap.id, { passphrase: 'a dearer passphrase' });
    expect(changed.ok).toBe(true);
    expect(await accounts.signIns.signIn('Ada', 'a dearer passphrase', '10.0.0.2')).toMatchObject({ ok: true });
    const restored = await db.selectFrom('people').select('passphrase_hash').where('id', '=', cheap.id).executeTakeFirstOrThrow();
    expect(restored.passphrase_hash).toMatch(/^scrypt\$32768\$8\$1\$/);
  });
});

describe('the sign-in throttle', () => {
  it('lets three failures through, then waits 1 s doubling up to a minute', () => {
    const throttle = new SignInThrottle(clock);
    expect([0, 1, 2, 3, 4, 5, 8, 9, 50].map((count) => throttle.delayAfter(count))).toEqual([0, 0, 0, 1000, 2000, 4000, 32_000, 60_000, 60_000]);
  });

  it('counts a name whatever its case, and an address, and forgets both an hour after the last failure', async () => {
    const throttle = new SignInThrottle(clock);
    for (let count = 0; count < 3; count++) throttle.failed(count % 2 ? 'SAM' : 'sam', '192.0.2.1');
    const admitted: string[] = [];
    // The name from another address, and another name from the address: both wait.
    void throttle.admit('Sam', '198.51.100.7').then(() => admitted.push('the name'));
    void throttle.admit('Alex', '192.0.2.1').then(() => admitted.push('the address'));
    expect(clock.nextTimer()).toBe('2026-11-28T12:00:01.000Z');
    await new Promise((resolve) => setImmediate(resolve));
    expect(admitted).toEqual([]);
    clock.advanceTo('2026-11-28T12:00:01.000Z');
    await new Promise((resolve) => setImmediate(resolve));
    expect(admitted.sort()).toEqual(['the address', 'the name']);

    clock.advanceTo('2026-11-28T13:00:00.000Z');
    expect(throttle.failed('sam', '192.0.2.1')).toBe(1);
  });

  it('refuses unchecked what one address asks beyond its waiting attempts, and only from that address', async () => {
    const throttle = new SignInThrottle(clock);
    for (let count = 0; count < 5; count++) throttle.failed('sam', '192.0.2.1');
    const waiting = Array.from({ length: defaultThrottleSettings.waitingPerAddress }, () => throttle.admit('sam', '192.0.2.1'));
    expect(await throttle.admit('sam', '192.0.2.1')).toBeUndefined();
    const elsewhere = throttle.admit('sam', '198.51.100.7');
    later(4000);
    for (const release of await Promise.all(waiting)) release!();
    expect(await elsewhere).toBeTypeOf('function');
    expect(await throttle.admit('sam', '192.0.2.1')).toBeTypeOf('function');
  });
});

describe('sign-ins', () => {
  it('name their person for 30 days after their last use, each use moving that on at most hourly', async () => {
    const sam = await person('Sam');
    const result = await accounts.signIns.signIn('sam', 'passphrase of Sam', '192.0.2.1');
    expect(result.ok).toBe(true);
    const secret = result.ok ? result.secret : '';
    expect(await accounts.signIns.caller(secret)).toEqual({ person: sam, via: 'sign_in', credentialId: expect.any(String) });
    later(29 * day);
    expect((await accounts.signIns.caller(secret))?.person.id).toBe(sam.id);
    later(29 * day);
    expect((await accounts.signIns.caller(secret))?.person.id).toBe(sam.id);
    later(31 * day);
    expect(await accounts.signIns.caller(secret)).toBeUndefined();
    // The next sign-in clears it away.
    await accounts.signIns.start(sam.id, '192.0.2.1');
    expect(await db.selectFrom('sign_ins').select('id').execute()).toHaveLength(1);
  });

  it('fail alike for a wrong passphrase, an unknown name and someone without a passphrase, each logged', async () => {
    await person('Sam');
    expect(await accounts.signIns.signIn('Sam', 'not it at all', '192.0.2.1')).toEqual({ ok: false, failures: 1 });
    expect(await accounts.signIns.signIn('Nobody', 'not it at all', '192.0.2.2')).toEqual({ ok: false, failures: 1 });
    expect(await accounts.signIns.signIn('Owner', '', '192.0.2.3')).toEqual({ ok: false, failures: 1 });
    expect(warnings).toEqual([
      { name: 'Sam', address: '192.0.2.1', failures: 1 },
      { name: 'Nobody', address: '192.0.2.2', failures: 1 },
      { name: 'Owner', address: '192.0.2.3', failures: 1 },
    ]);
  });

  it('end one at a time, or everywhere, and all at a passphrase reset', async () => {
    const sam = await person('Sam');
    const first = await accounts.signIns.start(sam.id, '192.0.2.1');
    const second = await accounts.signIns.start(sam.id, '192.0.2.2');
    expect(await accounts.signIns.signOut(first, false)).toBe(1);
    expect(await accounts.signIns.caller(first)).toBeUndefined();
    expect(await accounts.signIns.caller(second)).toBeDefined();
    expect(await accounts.signIns.signOut(second, true)).toBe(1);
    const third = await accounts.signIns.start(sam.id, '192.0.2.3');
    expect((await accounts.people.update(sam.id, { passphrase: 'a brand new one' })).ok).toBe(true);
    expect(await accounts.signIns.caller(third)).toBeUndefined();
  });
});

describe('personal API tokens', () => {
  it('name their person until revoked, and only their person revokes them', async () => {
    const sam = await person('Sam');
    const alex = await person('Alex');
    const { id, token } = await accounts.tokens.create(sam.id, 'script');
    expect(await accounts.tokens.caller(token)).toEqual({ person: sam, via: 'api_token', credentialId: expect.any(String) });
    expect((await accounts.tokens.list(sam.id))[0]).toEqual({ id, name: 'script', createdAt: '2026-11-28T12:00:00.000Z', lastUsedAt: '2026-11-28T12:00:00.000Z' });
    expect(await accounts.tokens.revoke(alex.id, id)).toBe(false);
    expect(await accounts.tokens.revoke(sam.id, id)).toBe(true);
    expect(await accounts.tokens.caller(token)).toBeUndefined();
    expect(await accounts.tokens.caller('not a token')).toBeUndefined();
  });
});

describe('invitations', () => {
  it('are one-time, last 7 days, and stay usable when the name chosen is taken', async () => {
    const owner = await household.firstOwner();
    const first = await accounts.invitations.create('child', owner.id);
    expect(first.expiresAt).toBe('2026-12-05T12:00:00.000Z');
    expect(await accounts.invitations.accept(first.code, 'owner', 'passphrase of the kid')).toMatchObject({ ok: false, code: 'name_taken' });
    const joined = await accounts.invitations.accept(first.code, 'Robin', 'passphrase of Robin');
    expect(joined).toMatchObject({ ok: true, person: { name: 'Robin', role: 'child', hasPassphrase: true } });
    expect((await household.people()).map((each) => each.name)).toEqual(['Owner', 'Robin']);
    expect(await accounts.invitations.accept(first.code, 'Mallory', 'passphrase of Mallory')).toMatchObject({ ok: false, code: 'invitation_not_valid' });

    const second = await accounts.invitations.create('adult', owner.id);
    later(7 * day);
    expect(await accounts.invitations.accept(second.code, 'Late', 'passphrase of Late')).toMatchObject({ ok: false, code: 'invitation_not_valid' });
    expect(await household.size()).toBe(2);
  });
});

describe('an invitation of an owner who left or is an owner no more', () => {
  it('lets nobody in', async () => {
    const first = await household.firstOwner();
    const second = await person('Pat', 'owner');
    const fromPat = await accounts.invitations.create('owner', second.id);
    const alsoFromPat = await accounts.invitations.create('adult', second.id);
    expect(await accounts.people.update(second.id, { role: 'adult' })).toMatchObject({ ok: true });
    expect(await accounts.invitations.accept(fromPat.code, 'Mallory', 'passphrase of Mallory')).toMatchObject({ ok: false, code: 'invitation_not_valid' });
    expect(await accounts.people.update(second.id, { role: 'owner' })).toMatchObject({ ok: true });
    const removed = await accounts.people.removeSettling(second.id, async () => undefined);
    expect(removed.ok).toBe(true);
    expect(await accounts.invitations.accept(alsoFromPat.code, 'Mallory', 'passphrase of Mallory')).toMatchObject({ ok: false, code: 'invitation_not_valid' });
    const fromFirst = await accounts.invitations.create('adult', first.id);
    expect(await accounts.invitations.accept(fromFirst.code, 'Robin', 'passphrase of Robin')).toMatchObject({ ok: true });
  });
});

describe('people', () => {
  it('keep an owner: the last one is neither demoted nor removable, another owner may be', async () => {
    const owner = await household.firstOwner();
    expect(await accounts.people.update(owner.id, { role: 'adult' })).toMatchObject({ ok: false, code: 'forbidden' });
    expect(await accounts.people.removal(owner.id)).toMatchObject({ ok: false, code: 'forbidden' });
    const second = await person('Pat', 'owner');
    expect(await accounts.people.removal(owner.id)).toMatchObject({ ok: true, heir: { id: second.id } });
    expect(await accounts.people.update(owner.id, { role: 'adult' })).toMatchObject({ ok: true, person: { role: 'adult' } });
    expect((await household.person(owner.id))?.role).toBe('adult');
  });

  it('keep an owner when two are demoted at the same moment: one of the two changes is refused', async () => {
    const owner = await household.firstOwner();
    const second = await person('Pat', 'owner');
    const results = await Promise.all([accounts.people.update(owner.id, { role: 'adult' }), accounts.people.update(second.id, { role: 'adult' })]);
    expect(results.filter((result) => result.ok)).toHaveLength(1);
    expect(results.find((result) => !result.ok)).toMatchObject({ code: 'forbidden' });
    household.changed();
    expect((await household.people()).filter((each) => each.role === 'owner')).toHaveLength(1);
  });

  it('keep an owner when two remove each other at the same moment', async () => {
    const owner = await household.firstOwner();
    const second = await person('Pat', 'owner');
    const settled: string[] = [];
    const remove = (id: string) => accounts.people.removeSettling(id, async (person) => void settled.push(person.name));
    const removed = await Promise.all([remove(owner.id), remove(second.id)]);
    expect(removed.filter((removal) => removal.ok)).toHaveLength(1);
    expect(removed.find((removal) => !removal.ok)).toMatchObject({ code: 'forbidden' });
    expect(settled).toEqual(['Owner']);
    household.changed();
    expect((await household.people()).filter((each) => each.role === 'owner')).toHaveLength(1);
  });

  it('ask for the current passphrase before changing one that was chosen', async () => {
    const sam = await person('Sam');
    expect(await accounts.people.updateOwn(sam, { passphrase: 'a brand new one' })).toMatchObject({ ok: false, code: 'forbidden' });
    expect(await accounts.people.updateOwn(sam, { passphrase: 'a brand new one', currentPassphrase: 'wrong' })).toMatchObject({ ok: false, code: 'forbidden' });
    expect(await accounts.people.updateOwn(sam, { passphrase: 'a brand new one', currentPassphrase: 'passphrase of Sam' })).toMatchObject({ ok: true });
    const owner = await household.firstOwner();
    expect(await accounts.people.updateOwn(owner, { passphrase: 'the first one chosen' })).toMatchObject({ ok: true, person: { hasPassphrase: true } });
  });

  it('refuse a name already taken whatever its case', async () => {
    await person('Sam');
    expect(await accounts.people.add({ name: ' SAM ', role: 'guest', passphrase: 'passphrase again' })).toMatchObject({ ok: false, code: 'name_taken' });
  });

  it('refuse a name that only looks different: another case beyond ASCII, wide letters, a decomposed accent', async () => {
    const emile = await person('Émile');
    const owner = await household.firstOwner();
    for (const name of ['émile', 'ÉMILE', 'Ｅ\u0301ｍｉｌｅ', 'E\u0301mile']) {
      expect(await accounts.people.add({ name, role: 'guest', passphrase: 'passphrase again' }), name).toMatchObject({ ok: false, code: 'name_taken' });
      expect(await accounts.people.update(owner.id, { name }), name).toMatchObject({ ok: false, code: 'name_taken' });
      const { code } = await accounts.invitations.create('guest', owner.id);
      expect(await accounts.invitations.accept(code, name, 'passphrase again'), name).toMatchObject({ ok: false, code: 'name_taken' });
    }
    // One's own name in another case is still one's own.
    expect(await accounts.people.update(emile.id, { name: 'ÉMILE' })).toMatchObject({ ok: true, person: { name: 'ÉMILE' } });
  });
});

describe('passkeys', () => {
  const rp = { id: 'localhost', origin: 'http://localhost:8000' };

  it('take each challenge once, for its purpose, host and person, for five minutes', async () => {
    const sam = await person('Sam');
    const alex = await person('Alex');
    const authenticator = softwarePasskey();

    const late = await accounts.passkeys.registrationOptions(sam, rp);
    later(5 * 60_000);
    expect(await accounts.passkeys.register(sam, authenticator.create(late, rp.origin) as never, rp, 'laptop')).toMatchObject({ ok: false, code: 'invalid_request' });

    const someoneElses = await accounts.passkeys.registrationOptions(alex, rp);
    expect(await accounts.passkeys.register(sam, authenticator.create(someoneElses, rp.origin) as never, rp, 'laptop')).toMatchObject({ ok: false });

    const otherHost = await accounts.passkeys.registrationOptions(sam, rp);
    expect(await accounts.passkeys.register(sam, authenticator.create(otherHost, rp.origin) as never, { id: 'hearth.localhost', origin: 'http://hearth.localhost:8000' }, 'laptop')).toMatchObject({ ok: false });

    const options = await accounts.passkeys.registrationOptions(sam, rp);
    expect(await accounts.passkeys.register(sam, authenticator.create(options, rp.origin) as never, rp, 'laptop')).toMatchObject({ ok: true, passkey: { personId: sam.id, name: 'laptop' } });

    // A registration's challenge does not sign in.
    const registration = await accounts.passkeys.registrationOptions(sam, rp);
    expect(await accounts.passkeys.signIn(authenticator.get({ challenge: registration.challenge, rpId: rp.id }, rp.origin) as never, rp, '192.0.2.1')).toMatchObject({ ok: false, code: 'passkey_failed' });
    const signIn = await accounts.passkeys.signInOptions(rp);
    expect(await accounts.passkeys.signIn(authenticator.get(signIn, rp.origin) as never, rp, '192.0.2.1')).toMatchObject({ ok: true, person: { id: sam.id } });
    expect(warnings).toContainEqual(expect.objectContaining({ address: '192.0.2.1', why: expect.any(String) }));
  });

  it('go with their person', async () => {
    const sam = await person('Sam');
    const authenticator = softwarePasskey();
    const options = await accounts.passkeys.registrationOptions(sam, rp);
    await accounts.passkeys.register(sam, authenticator.create(options, rp.origin) as never, rp, 'laptop');
    expect(await accounts.people.remove(sam.id)).toBe(true);
    const signIn = await accounts.passkeys.signInOptions(rp);
    expect(await accounts.passkeys.signIn(authenticator.get(signIn, rp.origin) as never, rp, '192.0.2.1')).toMatchObject({ ok: false });
  });
});
