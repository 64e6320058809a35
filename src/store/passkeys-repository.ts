import type { Db } from './database.ts';

export interface StoredPasskey {
  id: string;
  personId: string;
  name: string;
  /** COSE public key, base64url. */
  publicKey: string;
  counter: number;
  transports: string[];
  createdAt: string;
  lastUsedAt: string | null;
}

const columns = ['id', 'person_id', 'name', 'public_key', 'counter', 'transports', 'created_at', 'last_used_at'] as const;

function fromRow(row: { id: string; person_id: string; name: string; public_key: string; counter: number; transports: string; created_at: string; last_used_at: string | null }): StoredPasskey {
  return {
    id: row.id,
    personId: row.person_id,
    name: row.name,
    publicKey: row.public_key,
    counter: row.counter,
    transports: JSON.parse(row.transports) as string[],
    createdAt: row.created_at,
    lastUsedAt: row.last_used_at,
  };
}

export async function insertPasskey(db: Db, passkey: StoredPasskey): Promise<void> {
  await db
    .insertInto('passkeys')
    .values({
      id: passkey.id,
      person_id: passkey.personId,
      name: passkey.name,
      public_key: passkey.publicKey,
      counter: passkey.counter,
      transports: JSON.stringify(passkey.transports),
      created_at: passkey.createdAt,
      last_used_at: passkey.lastUsedAt,
    })
    .execute();
}

export async function findPasskey(db: Db, id: string): Promise<StoredPasskey | undefined> {
  const row = await db.selectFrom('passkeys').select(columns).where('id', '=', id).executeTakeFirst();
  return row && fromRow(row);
}

export async function listPasskeys(db: Db, personId: string): Promise<StoredPasskey[]> {
  const rows = await db.selectFrom('passkeys').select(columns).where('person_id', '=', personId).orderBy('created_at').execute();
  return rows.map(fromRow);
}

export async function recordPasskeyUse(db: Db, id: string, counter: number, at: string): Promise<void> {
  await db.updateTable('passkeys').set({ counter, last_used_at: at }).where('id', '=', id).execute();
}

/** Only the person's own: another's passkey id is as unknown as a missing one. */
export async function deletePasskey(db: Db, personId: string, id: string): Promise<boolean> {
  const result = await db.deleteFrom('passkeys').where('id', '=', id).where('person_id', '=', personId).executeTakeFirst();
  return result.numDeletedRows > 0n;
}
