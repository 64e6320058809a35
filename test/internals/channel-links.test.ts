// Linking chat accounts to people (src/household/channel-links.ts) on a real SQLite database in memory,
// with a clock the test moves: codes expire, work once, are stored hashed; wrong ones are counted.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ChannelLinks, linkCodeLifetimeMs } from '../../src/household/channel-links.ts';
import { Household } from '../../src/household/household.ts';
import type { Person } from '../../src/people/person.ts';
import { openDatabase, type Db } from '../../src/store/database.ts';
import { deletePerson, insertPerson } from '../../src/store/people-repository.ts';
import { ManualClock } from '../support/manual-clock.ts';

let db: Db;
let household: Household;
let clock: ManualClock;
let links: ChannelLinks;
let telegram: ReturnType<ChannelLinks['forChannel']>;

beforeEach(async () => {
  db = await openDatabase(':memory:');
  household = new Household(db);
  clock = new ManualClock('2026-11-28T20:00:00Z');
  links = new ChannelLinks(db, household, clock);
  telegram = links.forChannel('telegram');
});

afterEach(async () => {
  await db.destroy();
});

async function join(name: string, role: Person['role'] = 'adult'): Promise<Person> {
  const person = await insertPerson(db, { name, role, passphraseHash: null });
  household.changed();
  return person;
}

describe('ChannelLinks', () => {
  it('in a household of one every account acts as the owner unlinked; once there are two, an unlinked account is nobody', async () => {
    const owner = await household.firstOwner();
    expect(await telegram.whoIs('42')).toEqual({ person: owner, linked: false });
    await join('Bob');
    expect(await telegram.whoIs('42')).toBeUndefined();
  });

  it('a code links once, for ten minutes; spaces, dashes and case do not matter; only its digest is stored', async () => {
    const bob = await join('Bob');
    const { code, expiresAt } = await links.issueCode('telegram', bob.id);
    expect(code).toMatch(/^[A-Z2-9]{10}$/);
    expect(Date.parse(expiresAt) - clock.now().getTime()).toBe(linkCodeLifetimeMs);
    const stored = await db.selectFrom('channel_link_codes').selectAll().execute();
    expect(JSON.stringify(stored)).not.toContain(code);
    expect(await telegram.link('42', ` ${code.slice(0, 4).toLowerCase()}-${code.slice(4)} `)).toEqual({ ok: true, person: bob });
    expect(await telegram.whoIs('42')).toEqual({ person: bob, linked: true });
    expect(await telegram.link('43', code)).toEqual({ ok: false, reason: 'wrong' });
    // The same code is no key to another channel's accounts either.
    const second = await links.issueCode('telegram', bob.id);
    expect(await links.forChannel('signal').link('42', second.code)).toEqual({ ok: false, reason: 'wrong' });
  });

  it('an expired code is refused and used up; a new code replaces the person\'s last', async () => {
    const bob = await join('Bob');
    const late = await links.issueCode('telegram', bob.id);
    clock.advanceTo(new Date(clock.now().getTime() + linkCodeLifetimeMs));
    expect(await telegram.link('42', late.code)).toEqual({ ok: false, reason: 'expired' });
    expect(await telegram.link('42', late.code)).toEqual({ ok: false, reason: 'wrong' });
    const first = await links.issueCode('telegram', bob.id);
    const last = await links.issueCode('telegram', bob.id);
    expect(await telegram.link('42', first.code)).toEqual({ ok: false, reason: 'wrong' });
    expect(await telegram.link('42', last.code)).toMatchObject({ ok: true });
  });

  it('five wrong codes make the account wait ten minutes, a right one included', async () => {
    const bob = await join('Bob');
    for (let attempt = 0; attempt < 5; attempt += 1) expect(await telegram.link('42', `WRONG${attempt}`)).toEqual({ ok: false, reason: 'wrong' });
    const { code } = await links.issueCode('telegram', bob.id);
    expect(await telegram.link('42', code)).toEqual({ ok: false, reason: 'too_many' });
    // Another account is not held up by this one's guesses.
    const other = await links.issueCode('telegram', (await join('Carol')).id);
    expect(await telegram.link('43', other.code)).toMatchObject({ ok: true });
    clock.advanceTo(new Date(clock.now().getTime() + linkCodeLifetimeMs));
    const fresh = await links.issueCode('telegram', bob.id);
    expect(await telegram.link('42', fresh.code)).toEqual({ ok: true, person: bob });
  });

  it('a code relinks an account to its new person; unlinking and removing a person end their links', async () => {
    const bob = await join('Bob');
    const carol = await join('Carol');
    await telegram.link('42', (await links.issueCode('telegram', bob.id)).code);
    await telegram.link('42', (await links.issueCode('telegram', carol.id)).code);
    await telegram.link('43', (await links.issueCode('telegram', bob.id)).code);
    const linked = (await telegram.linkedAccounts()).map(({ account, person }) => `${account} ${person.name}`);
    expect(linked.sort()).toEqual(['42 Carol', '43 Bob']);
    expect(await links.unlink('telegram', bob.id)).toBe(1);
    expect(await telegram.whoIs('43')).toBeUndefined();
    await deletePerson(db, carol.id);
    household.changed();
    expect(await telegram.whoIs('42')).toBeUndefined();
    expect(await db.selectFrom('channel_links').selectAll().execute()).toEqual([]);
  });
});
