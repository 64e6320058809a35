import { createHash, randomInt } from 'node:crypto';
import type { Person } from '../people/person.ts';
import { deleteChannelLinksOf, findChannelLink, listChannelLinks, replaceLinkCode, takeLinkCode, upsertChannelLink } from '../store/channel-links-repository.ts';
import type { Db } from '../store/database.ts';
import { systemClock, type Clock } from '../time/clock.ts';
import type { Household } from './household.ts';

/** How long a code from the page links an account. */
export const linkCodeLifetimeMs = 10 * 60_000;

/** Wrong codes an account may send before it must wait (`linkCodeLifetimeMs` from its first). */
const wrongCodesAllowed = 5;

// Easy to read out and type on a phone: no 0/O, 1/I/L, U. Ten of them are about 49 bits, tried
// only by allowed accounts, five at a time, against a code that lives ten minutes.
const codeAlphabet = 'ABCDEFGHJKMNPQRSTVWXYZ23456789';
const codeLength = 10;

export type LinkResult =
  | { ok: true; person: Person }
  | { ok: false; reason: 'wrong' | 'expired' | 'too_many' };

/** Who a chat account acts as: the person it is linked to, or in a household of one the owner (`linked: false`). */
export interface AccountPerson {
  person: Person;
  linked: boolean;
}

/** What a channel is given of the household (ChannelContext.people): its accounts' people and linking. */
export interface ChannelPeople {
  /**
   * The person the account acts as; undefined when it is linked to nobody in a household of more
   * than one (it is told how to link). In a household of one every account the channel lets in
   * acts as the owner, as a lone loopback visitor does: a one-person Hearth needs no linking.
   */
  whoIs(account: string): Promise<AccountPerson | undefined>;
  /** Links the account to the person whose code it is; a code works once, for ten minutes. */
  link(account: string, code: string): Promise<LinkResult>;
  /** Every linked account with its person. */
  linkedAccounts(): Promise<Array<{ account: string; person: Person }>>;
}

/** Spaces, dashes and case do not matter in a typed code. */
function normaliseCode(code: string): string {
  return code.replace(/[\s-]/g, '').toUpperCase();
}

function digestOfCode(code: string): string {
  return createHash('sha256').update(normaliseCode(code)).digest('base64url');
}

/**
 * Links chat accounts (a Telegram user id) to people: a person gets a one-time code in the page
 * (`POST /me/telegram/link-code`), sends it in the chat (`/start <code>`), and from then on the
 * chat reaches only their sessions (docs/people.md, *Telegram in a household*).
 */
export class ChannelLinks {
  /** Wrong codes by channel and account: when the first was sent, and how many. */
  private readonly wrongCodes = new Map<string, { since: number; count: number }>();

  constructor(
    private readonly db: Db,
    private readonly household: Pick<Household, 'person' | 'size' | 'firstOwner'>,
    private readonly clock: Pick<Clock, 'now'> = systemClock,
  ) {}

  /** A new code for the person (their earlier one stops working), and when it expires. */
  async issueCode(channel: string, personId: string): Promise<{ code: string; expiresAt: string }> {
    const code = Array.from({ length: codeLength }, () => codeAlphabet[randomInt(codeAlphabet.length)]).join('');
    const now = this.clock.now();
    const expiresAt = new Date(now.getTime() + linkCodeLifetimeMs).toISOString();
    await replaceLinkCode(this.db, { channel, personId, codeHash: digestOfCode(code), createdAt: now.toISOString(), expiresAt });
    return { code, expiresAt };
  }

  /** Unlinks every account of the channel linked to the person; returns how many. */
  unlink(channel: string, personId: string): Promise<number> {
    return deleteChannelLinksOf(this.db, channel, personId);
  }

  /** The accounts of the channel linked to the person. */
  async accountsOf(channel: string, personId: string): Promise<string[]> {
    return (await listChannelLinks(this.db, channel)).filter((link) => link.personId === personId).map((link) => link.account);
  }

  /** The view of one channel that its context carries. */
  forChannel(channel: string): ChannelPeople {
    return {
      whoIs: (account) => this.whoIs(channel, account),
      link: (account, code) => this.link(channel, account, code),
      linkedAccounts: () => this.linkedAccounts(channel),
    };
  }

  private async whoIs(channel: string, account: string): Promise<AccountPerson | undefined> {
    const link = await findChannelLink(this.db, channel, account);
    const person = link && (await this.household.person(link.personId));
    if (person) return { person, linked: true };
    if ((await this.household.size()) === 1) return { person: await this.household.firstOwner(), linked: false };
    return undefined;
  }

  private async link(channel: string, account: string, code: string): Promise<LinkResult> {
    const key = `${channel}:${account}`;
    const now = this.clock.now().getTime();
    const wrong = this.wrongCodes.get(key);
    if (wrong && now - wrong.since >= linkCodeLifetimeMs) this.wrongCodes.delete(key);
    if ((this.wrongCodes.get(key)?.count ?? 0) >= wrongCodesAllowed) return { ok: false, reason: 'too_many' };
    const taken = await takeLinkCode(this.db, channel, digestOfCode(code));
    const person = taken && (await this.household.person(taken.personId));
    if (!taken || !person) {
      const counted = this.wrongCodes.get(key) ?? { since: now, count: 0 };
      counted.count += 1;
      this.wrongCodes.set(key, counted);
      return { ok: false, reason: 'wrong' };
    }
    if (Date.parse(taken.expiresAt) <= now) return { ok: false, reason: 'expired' };
    this.wrongCodes.delete(key);
    await upsertChannelLink(this.db, channel, { account, personId: person.id, linkedAt: new Date(now).toISOString() });
    return { ok: true, person };
  }

  private async linkedAccounts(channel: string): Promise<Array<{ account: string; person: Person }>> {
    const linked: Array<{ account: string; person: Person }> = [];
    for (const link of await listChannelLinks(this.db, channel)) {
      const person = await this.household.person(link.personId);
      if (person) linked.push({ account: link.account, person });
    }
    return linked;
  }
}
