import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import type { Person, Role } from '../people/person.ts';
import type { Db } from './database.ts';
import type { PeopleTable } from './schema.ts';

const columns = ['id', 'name', 'role', 'passphrase_hash', 'created_at', 'updated_at'] as const;

function fromRow(row: PeopleTable): Person {
  return { id: row.id, name: row.name, role: row.role as Role, hasPassphrase: row.passphrase_hash !== null, createdAt: row.created_at };
}

/** Everyone in the household, the owner first, then in the order they joined. */
export async function listPeople(db: Db): Promise<Person[]> {
  const rows = await db.selectFrom('people').select(columns).orderBy((expression) => expression.case().when('role', '=', 'owner').then(0).else(1).end()).orderBy('created_at').execute();
  return rows.map(fromRow);
}

export async function findPerson(db: Db, id: string): Promise<Person | undefined> {
  const row = await db.selectFrom('people').select(columns).where('id', '=', id).executeTakeFirst();
  return row && fromRow(row);
}

/** By name whatever its case, with the stored passphrase hash (null when none was chosen). */
export async function findPersonByName(db: Db, name: string): Promise<{ person: Person; passphraseHash: string | null } | undefined> {
  // The same comparison as the unique index on name, so the index answers it.
  const found = await db.selectFrom('people').select(columns).where(sql<boolean>`name = ${name} collate nocase`).executeTakeFirst();
  return found && { person: fromRow(found), passphraseHash: found.passphrase_hash };
}

/** The owner who has been here longest: who an install's existing sessions belong to. */
export async function findFirstOwner(db: Db): Promise<Person | undefined> {
  const row = await db.selectFrom('people').select(columns).where('role', '=', 'owner').orderBy('created_at').executeTakeFirst();
  return row && fromRow(row);
}

export async function countPeople(db: Db): Promise<number> {
  const { count } = await db.selectFrom('people').select((expression) => expression.fn.countAll<number>().as('count')).executeTakeFirstOrThrow();
  return Number(count);
}

export async function insertPerson(db: Db, person: { name: string; role: Role; passphraseHash: string | null }): Promise<Person> {
  const now = new Date().toISOString();
  const row: PeopleTable = { id: randomUUID(), name: person.name, role: person.role, passphrase_hash: person.passphraseHash, created_at: now, updated_at: now };
  await db.insertInto('people').values(row).execute();
  return fromRow(row);
}

export async function updatePerson(db: Db, id: string, changes: { name?: string; role?: Role; passphraseHash?: string }): Promise<Person | undefined> {
  await db
    .updateTable('people')
    .set({
      ...(changes.name !== undefined && { name: changes.name }),
      ...(changes.role !== undefined && { role: changes.role }),
      ...(changes.passphraseHash !== undefined && { passphrase_hash: changes.passphraseHash }),
      updated_at: new Date().toISOString(),
    })
    .where('id', '=', id)
    .execute();
  return findPerson(db, id);
}

export async function deletePerson(db: Db, id: string): Promise<boolean> {
  const result = await db.deleteFrom('people').where('id', '=', id).executeTakeFirst();
  return result.numDeletedRows > 0n;
}
