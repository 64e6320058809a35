import type { Logger } from '../logger.ts';
import type { Caller } from '../people/person.ts';
import type { Db } from '../store/database.ts';
import type { Clock } from '../time/clock.ts';
import { ApiTokens } from './api-tokens.ts';
import { AccessEnds } from './ended-access.ts';
import type { Household } from './household.ts';
import { Invitations } from './invitations.ts';
import { Passkeys } from './passkeys.ts';
import type { PassphraseCost } from './passphrase.ts';
import { PeopleAdmin } from './people-admin.ts';
import { SignInThrottle, defaultThrottleSettings, type ThrottleSettings } from './sign-in-throttle.ts';
import { SignIns } from './sign-ins.ts';

export interface AccountsOptions {
  db: Db;
  household: Household;
  clock: Clock;
  logger: Pick<Logger, 'warn' | 'info'>;
  throttle?: ThrottleSettings;
  /** scrypt's cost for new passphrases (passphrase.ts's default otherwise; tests choose a cheap one). */
  passphraseCost?: PassphraseCost;
}

/** How people prove who they are and how the household changes: sign-ins, passkeys, personal tokens, people, invitations. */
export class Accounts {
  readonly signIns: SignIns;
  readonly tokens: ApiTokens;
  readonly people: PeopleAdmin;
  readonly invitations: Invitations;
  readonly passkeys: Passkeys;
  /** Where the open sockets learn that the sign-in, token or role they were opened with ended. */
  readonly ends = new AccessEnds();

  constructor(options: AccountsOptions) {
    const { db, household, clock, logger, passphraseCost } = options;
    this.signIns = new SignIns({ db, household, clock, logger, throttle: new SignInThrottle(clock, options.throttle ?? defaultThrottleSettings), ends: this.ends, passphraseCost });
    this.tokens = new ApiTokens({ db, household, clock, ends: this.ends });
    this.people = new PeopleAdmin({ db, household, signIns: this.signIns, ends: this.ends, passphraseCost });
    this.invitations = new Invitations({ db, household, clock, passphraseCost });
    this.passkeys = new Passkeys({ db, household, clock, logger });
  }

  /** What identify() asks of a request's cookie and Bearer token (server/identify.ts `Credentials`). */
  credentials(): { signedIn(secret: string): Promise<Caller | undefined>; apiToken(secret: string): Promise<Caller | undefined> } {
    return { signedIn: (secret) => this.signIns.caller(secret), apiToken: (secret) => this.tokens.caller(secret) };
  }
}
