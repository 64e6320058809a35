import type { Db } from './database.ts';

/** A personal API token as its person lists it: never its secret. */
export interface ApiToken {
  id: string;
  name: string;
  createdAt: string;
  lastUsedAt: string | null;
}

export async function insertApiToken(db: Db, token: ApiToken & { personId: string; secretHash: string }): Promise<void> {
  await db
    .insertInto('api_tokens')
    .values({ id: token.id, secret_hash: token.secretHash, person_id: token.personId, name: token.name, created_at: token.createdAt, last_used_at: token.lastUsedAt })
    .execute();
}

export async function findApiToken(db: Db, secretHash: string): Promise<(ApiToken & { personId: string }) | undefined> {
  const row = await db.selectFrom('api_tokens').select(['id', 'person_id', 'name', 'created_at', 'last_used_at']).where('secret_hash', '=', secretHash).executeTakeFirst();
  return row && { id: row.id, personId: row.person_id, name: row.name, createdAt: row.created_at, lastUsedAt: row.last_used_at };
}

export async function listApiTokens(db: Db, personId: string): Promise<ApiToken[]> {
  const rows = await db.selectFrom('api_tokens').select(['id', 'name', 'created_at', 'last_used_at']).where('person_id', '=', personId).orderBy('created_at').execute();
  return rows.map((row) => ({ id: row.id, name: row.name, createdAt: row.created_at, lastUsedAt: row.last_used_at }));
}

export async function touchApiToken(db: Db, id: string, at: string): Promise<void> {
  await db.updateTable('api_tokens').set({ last_used_at: at }).where('id', '=', id).execute();
}

/** Only the person's own: another's token id is as unknown as a missing one. */
export async function deleteApiToken(db: Db, personId: string, id: string): Promise<boolean> {
  const result = await db.deleteFrom('api_tokens').where('id', '=', id).where('person_id', '=', personId).executeTakeFirst();
  return result.numDeletedRows > 0n;
}
