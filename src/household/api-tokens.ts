import { randomUUID } from 'node:crypto';
import type { Caller } from '../people/person.ts';
import { deleteApiToken, findApiToken, insertApiToken, listApiTokens, touchApiToken, type ApiToken } from '../store/api-tokens-repository.ts';
import type { Db } from '../store/database.ts';
import type { Clock } from '../time/clock.ts';
import type { AccessEnds } from './ended-access.ts';
import type { Household } from './household.ts';
import { digestOf, newSecret } from './secrets.ts';

export type { ApiToken };

/** Recognisable in a script or a leaked log: `hearth_` then 256 random bits. */
const tokenPrefix = 'hearth_';
const touchEveryMs = 60 * 60_000;

/**
 * Personal API tokens, for scripts and the REST examples: shown once when made, stored as a
 * digest, each acting as its person until revoked. Nothing is cached, so a revoked token is
 * refused by the very next request.
 */
export class ApiTokens {
  constructor(private readonly options: { db: Db; household: Household; clock: Clock; ends: AccessEnds }) {}

  async create(personId: string, name: string): Promise<ApiToken & { token: string }> {
    const token = newSecret(tokenPrefix);
    const created: ApiToken = { id: randomUUID(), name, createdAt: this.options.clock.now().toISOString(), lastUsedAt: null };
    await insertApiToken(this.options.db, { ...created, personId, secretHash: digestOf(token) });
    return { ...created, token };
  }

  list(personId: string): Promise<ApiToken[]> {
    return listApiTokens(this.options.db, personId);
  }

  /** False when the person has no token of that id (another's included). */
  async revoke(personId: string, id: string): Promise<boolean> {
    const revoked = await deleteApiToken(this.options.db, personId, id);
    if (revoked) this.options.ends.ended({ personId, via: 'api_token', credentialId: id });
    return revoked;
  }

  /** Whose token this is (server/identify.ts `Credentials.apiToken`). */
  async caller(secret: string): Promise<Caller | undefined> {
    if (!secret.startsWith(tokenPrefix)) return undefined;
    const { db, household, clock } = this.options;
    const token = await findApiToken(db, digestOf(secret));
    if (!token) return undefined;
    const person = await household.person(token.personId);
    if (!person) return undefined;
    const now = clock.now().getTime();
    if (token.lastUsedAt === null || now - Date.parse(token.lastUsedAt) >= touchEveryMs) await touchApiToken(db, token.id, new Date(now).toISOString());
    return { person, via: 'api_token', credentialId: token.id };
  }
}
