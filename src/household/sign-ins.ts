import { randomUUID } from 'node:crypto';
import type { Logger } from '../logger.ts';
import type { Caller, Person } from '../people/person.ts';
import type { Db } from '../store/database.ts';
import { findPersonByName } from '../store/people-repository.ts';
import { deleteSignIn, deleteSignInsOf, deleteSignInsUsedBefore, findSignIn, insertSignIn, touchSignIn } from '../store/sign-ins-repository.ts';
import type { Clock } from '../time/clock.ts';
import type { AccessEnds } from './ended-access.ts';
import type { Household } from './household.ts';
import { verifyPassphrase, type PassphraseCost } from './passphrase.ts';
import { digestOf, newSecret } from './secrets.ts';
import type { SignInThrottle } from './sign-in-throttle.ts';

/** A sign-in unused this long has ended; each use moves it on. */
export const signInLifetimeMs = 30 * 24 * 60 * 60_000;
/** How stale last_used_at may get before a use writes it: a write an hour, not one a request. */
const touchEveryMs = 60 * 60_000;

export type SignInResult = { ok: true; person: Person; secret: string } | { ok: false; failures?: number };

export interface SignInsOptions {
  db: Db;
  household: Household;
  clock: Clock;
  logger: Pick<Logger, 'warn' | 'info'>;
  throttle: SignInThrottle;
  ends: AccessEnds;
  /** What an unknown name's check costs, as much as a known one's (passphrase.ts's default otherwise). */
  passphraseCost?: PassphraseCost;
}

/** Signing in with a name and passphrase, what a sign-in's cookie proves, and signing out. */
export class SignIns {
  constructor(private readonly options: SignInsOptions) {}

  /**
   * Checks the passphrase once the throttle lets the attempt through. A wrong passphrase, an
   * unknown name and a person without a passphrase fail alike, each logged with name and address.
   */
  async signIn(name: string, passphrase: string, address: string): Promise<SignInResult> {
    const { db, throttle, logger } = this.options;
    const release = await throttle.admit(name, address);
    if (!release) {
      logger.warn({ name, address }, 'sign-in refused unchecked: too many attempts from this address are waiting');
      return { ok: false };
    }
    try {
      const found = await findPersonByName(db, name);
      if (found && (await verifyPassphrase(passphrase, found.passphraseHash, this.options.passphraseCost))) {
        throttle.succeeded(name, address);
        logger.info({ name: found.person.name, address }, 'signed in');
        return { ok: true, person: found.person, secret: await this.start(found.person.id, address) };
      }
      if (!found) await verifyPassphrase(passphrase, null, this.options.passphraseCost);
      const failures = throttle.failed(name, address);
      logger.warn({ name, address, failures }, 'sign-in failed');
      return { ok: false, failures };
    } finally {
      release();
    }
  }

  /** A new sign-in for the person; returns the secret the cookie carries (only its digest is kept). */
  async start(personId: string, address: string): Promise<string> {
    // Each new sign-in clears away those that ended by age, so the table does not grow forever.
    await this.sweep();
    const secret = newSecret();
    const now = this.options.clock.now().toISOString();
    await insertSignIn(this.options.db, { id: randomUUID(), secretHash: digestOf(secret), personId, address, createdAt: now, lastUsedAt: now });
    return secret;
  }

  /** Whose sign-in the cookie is, while it lasts (server/identify.ts `Credentials.signedIn`). */
  async caller(secret: string): Promise<Caller | undefined> {
    const { db, household, clock } = this.options;
    const signIn = await findSignIn(db, digestOf(secret));
    if (!signIn) return undefined;
    const now = clock.now().getTime();
    const lastUsed = Date.parse(signIn.lastUsedAt);
    if (now - lastUsed >= signInLifetimeMs) return undefined;
    const person = await household.person(signIn.personId);
    if (!person) return undefined;
    if (now - lastUsed >= touchEveryMs) await touchSignIn(db, signIn.id, new Date(now).toISOString());
    return { person, via: 'sign_in', credentialId: signIn.id };
  }

  /** Ends this sign-in, or every sign-in of its person on every device; returns how many ended. */
  async signOut(secret: string, everywhere: boolean): Promise<number> {
    const { db, ends } = this.options;
    const signIn = await findSignIn(db, digestOf(secret));
    if (!signIn) return 0;
    if (everywhere) return this.endAll(signIn.personId);
    const ended = (await deleteSignIn(db, digestOf(secret))) ? 1 : 0;
    ends.ended({ personId: signIn.personId, via: 'sign_in', credentialId: signIn.id });
    return ended;
  }

  /** Every sign-in of the person (a passphrase reset, signing out everywhere by token). */
  async endAll(personId: string): Promise<number> {
    const ended = await deleteSignInsOf(this.options.db, personId);
    this.options.ends.ended({ personId, via: 'sign_in' });
    return ended;
  }

  /** Drops sign-ins that ended by age; returns how many. */
  async sweep(): Promise<number> {
    return deleteSignInsUsedBefore(this.options.db, new Date(this.options.clock.now().getTime() - signInLifetimeMs).toISOString());
  }
}
