import type { Db } from './database.ts';

export interface StoredSignIn {
  id: string;
  personId: string;
  address: string;
  createdAt: string;
  lastUsedAt: string;
}

export async function insertSignIn(db: Db, signIn: StoredSignIn & { secretHash: string }): Promise<void> {
  await db
    .insertInto('sign_ins')
    .values({ id: signIn.id, secret_hash: signIn.secretHash, person_id: signIn.personId, address: signIn.address, created_at: signIn.createdAt, last_used_at: signIn.lastUsedAt })
    .execute();
}

export async function findSignIn(db: Db, secretHash: string): Promise<StoredSignIn | undefined> {
  const row = await db.selectFrom('sign_ins').select(['id', 'person_id', 'address', 'created_at', 'last_used_at']).where('secret_hash', '=', secretHash).executeTakeFirst();
  return row && { id: row.id, personId: row.person_id, address: row.address, createdAt: row.created_at, lastUsedAt: row.last_used_at };
}

export async function touchSignIn(db: Db, id: string, at: string): Promise<void> {
  await db.updateTable('sign_ins').set({ last_used_at: at }).where('id', '=', id).execute();
}

export async function deleteSignIn(db: Db, secretHash: string): Promise<boolean> {
  const result = await db.deleteFrom('sign_ins').where('secret_hash', '=', secretHash).executeTakeFirst();
  return result.numDeletedRows > 0n;
}

/** Every sign-in of the person, on every device; returns how many ended. */
export async function deleteSignInsOf(db: Db, personId: string): Promise<number> {
  const result = await db.deleteFrom('sign_ins').where('person_id', '=', personId).executeTakeFirst();
  return Number(result.numDeletedRows);
}

export async function deleteSignInsUsedBefore(db: Db, before: string): Promise<number> {
  const result = await db.deleteFrom('sign_ins').where('last_used_at', '<', before).executeTakeFirst();
  return Number(result.numDeletedRows);
}
