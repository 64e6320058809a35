import { sql, type Selectable } from 'kysely';
import type { Db } from './database.ts';
import type { DocumentsTable } from './schema.ts';

/** A documents row as stored (the library turns it into the summary it shows). */
export type DocumentRow = Selectable<DocumentsTable>;

export interface PassageInput {
  ordinal: number;
  page: number | null;
  heading: string | null;
  text: string;
}

export interface StoredPassage extends PassageInput {
  id: number;
  document_id: string;
}

/** Whose documents a search may reach: the household's, and this person's own when there is one. */
export interface LibraryReach {
  personId: string | null;
}

export async function insertDocument(db: Db, row: DocumentRow): Promise<void> {
  await db.insertInto('documents').values(row).execute();
}

export async function allDocuments(db: Db): Promise<DocumentRow[]> {
  return db.selectFrom('documents').selectAll().orderBy('added_at').orderBy('id').execute();
}

export async function findDocument(db: Db, id: string): Promise<DocumentRow | undefined> {
  return db.selectFrom('documents').selectAll().where('id', '=', id).executeTakeFirst();
}

/** Answers the row as it is after the change, or undefined when the document is gone. */
export async function updateDocument(db: Db, id: string, change: Partial<Omit<DocumentRow, 'id'>>): Promise<DocumentRow | undefined> {
  const result = await db.updateTable('documents').set(change).where('id', '=', id).executeTakeFirst();
  if (result.numUpdatedRows === 0n) return undefined;
  return findDocument(db, id);
}

/** Removes the document and its passages (the index follows by trigger); answers the passages' ids it had. */
export async function deleteDocument(db: Db, id: string): Promise<number[]> {
  return db.transaction().execute(async (transaction) => {
    const passages = await transaction.selectFrom('document_passages').select('id').where('document_id', '=', id).execute();
    await transaction.deleteFrom('document_passages').where('document_id', '=', id).execute();
    await transaction.deleteFrom('documents').where('id', '=', id).execute();
    return passages.map((passage) => passage.id);
  });
}

/**
 * The document's passages as split, replacing any it had, `chunk` of them a transaction with
 * `pause` between (a large document's thousands of passages and their index entries would
 * otherwise hold the event loop for seconds). Its passage count and pages are set last: until
 * then the passages are not whole, and a restart splits the document again. Answers the row
 * after, or undefined when the document was deleted meanwhile.
 */
export async function storePassages(
  db: Db,
  documentId: string,
  passages: readonly PassageInput[],
  pages: number | null,
  options: { chunk: number; pause: () => Promise<void> },
): Promise<DocumentRow | undefined> {
  await db.deleteFrom('document_passages').where('document_id', '=', documentId).execute();
  for (let start = 0; start < passages.length; start += options.chunk) {
    const rows = passages.slice(start, start + options.chunk).map((passage) => ({ document_id: documentId, ...passage, vector: null, embedding_model: null }));
    const stored = await db.transaction().execute(async (transaction) => {
      if (!(await transaction.selectFrom('documents').select('id').where('id', '=', documentId).executeTakeFirst())) return false;
      await transaction.insertInto('document_passages').values(rows).execute();
      return true;
    });
    if (!stored) return undefined;
    await options.pause();
  }
  return updateDocument(db, documentId, { passages: passages.length, pages, progress: 0, embedding_model: null });
}

/** Passages of the document without a vector of `model`, first in the document first. */
export async function passagesToEmbed(db: Db, documentId: string, model: string, limit: number): Promise<StoredPassage[]> {
  return db
    .selectFrom('document_passages')
    .select(['id', 'document_id', 'ordinal', 'page', 'heading', 'text'])
    .where('document_id', '=', documentId)
    .where((where) => where.or([where('embedding_model', 'is', null), where('embedding_model', '!=', model), where('vector', 'is', null)]))
    .orderBy('ordinal')
    .limit(limit)
    .execute();
}

/** How many of the document's passages have a vector of `model`. */
export async function embeddedCount(db: Db, documentId: string, model: string): Promise<number> {
  const row = await db
    .selectFrom('document_passages')
    .select((select) => select.fn.countAll<number>().as('count'))
    .where('document_id', '=', documentId)
    .where('embedding_model', '=', model)
    .where('vector', 'is not', null)
    .executeTakeFirstOrThrow();
  return Number(row.count);
}

/** Stores the vectors in one transaction; answers the ids of the passages still there to take them. */
export async function storeVectors(db: Db, model: string, vectors: readonly { id: number; vector: Float32Array }[]): Promise<number[]> {
  return db.transaction().execute(async (transaction) => {
    const stored: number[] = [];
    for (const { id, vector } of vectors) {
      const result = await transaction.updateTable('document_passages').set({ vector: vectorBytes(vector), embedding_model: model }).where('id', '=', id).executeTakeFirst();
      if (result.numUpdatedRows > 0n) stored.push(id);
    }
    return stored;
  });
}

/** Every vector of `model`, a batch at a time, with the document each passage belongs to. */
export async function* vectorsOf(db: Db, model: string, batch = 2000): AsyncGenerator<{ id: number; document_id: string; vector: Float32Array }[]> {
  let after = 0;
  for (;;) {
    const rows = await db
      .selectFrom('document_passages')
      .select(['id', 'document_id', 'vector'])
      .where('embedding_model', '=', model)
      .where('vector', 'is not', null)
      .where('id', '>', after)
      .orderBy('id')
      .limit(batch)
      .execute();
    if (rows.length === 0) return;
    after = rows[rows.length - 1]!.id;
    yield rows.map((row) => ({ id: row.id, document_id: row.document_id, vector: vectorOf(row.vector!) }));
  }
}

export async function readPassages(db: Db, documentId: string, from: number, count: number): Promise<StoredPassage[]> {
  return db
    .selectFrom('document_passages')
    .select(['id', 'document_id', 'ordinal', 'page', 'heading', 'text'])
    .where('document_id', '=', documentId)
    .where('ordinal', '>=', from)
    .orderBy('ordinal')
    .limit(count)
    .execute();
}

export async function passagesById(db: Db, ids: readonly number[]): Promise<StoredPassage[]> {
  if (ids.length === 0) return [];
  return db.selectFrom('document_passages').select(['id', 'document_id', 'ordinal', 'page', 'heading', 'text']).where('id', 'in', ids).execute();
}

/**
 * The best passages for an FTS5 expression by BM25 (a heading match counts less than the text's),
 * among the documents `reach` may see. The reach is checked for each match before ranking, so
 * nobody else's documents can crowd theirs out of the limit.
 */
export async function matchPassages(db: Db, expression: string, reach: LibraryReach, limit: number): Promise<number[]> {
  const { rows } = await sql<{ rowid: number }>`
    select rowid from document_passages_fts
    where document_passages_fts match ${expression} and rank match 'bm25(0.5, 1.0)'
      and exists (
        select 1 from document_passages p join documents d on d.id = p.document_id
        where p.id = document_passages_fts.rowid
          and (d.library = 'household' or (d.library = 'mine' and d.owner_person_id = ${reach.personId}))
      )
    order by rank limit ${limit}`.execute(db);
  return rows.map((row) => row.rowid);
}

/** How many passages an FTS5 expression matches, counted up to `cap` (a common word's count stops there). */
export async function matchCount(db: Db, expression: string, cap: number): Promise<number> {
  const { rows } = await sql<{ count: number }>`
    select count(*) as count from (select 1 from document_passages_fts where document_passages_fts match ${expression} limit ${cap})`.execute(db);
  return Number(rows[0]?.count ?? 0);
}

export function vectorBytes(vector: Float32Array): Uint8Array {
  return new Uint8Array(vector.buffer, vector.byteOffset, vector.byteLength);
}

/** A copy, aligned for Float32Array (SQLite's blob may sit at any offset of a shared buffer). */
export function vectorOf(bytes: Uint8Array): Float32Array {
  const vector = new Float32Array(bytes.byteLength / 4);
  new Uint8Array(vector.buffer).set(bytes);
  return vector;
}
