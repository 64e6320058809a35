import { sql, type RawBuilder } from 'kysely';
import type { Db } from './database.ts';
import { firstOwnerId } from './first-owner.ts';
import type { Message } from './message.ts';
import type { MemoryFactsTable } from './schema.ts';

/**
 * A durable fact about a person: `(category, key) → value`, unique per person, category and key.
 * Every function here reads and writes one person's facts: the `personId` it is given.
 */
export interface MemoryFact {
  id: number;
  category: string;
  key: string;
  value: string;
  createdAt: string;
  updatedAt: string;
}

export interface FactInput {
  category: string;
  key: string;
  value: string;
}

export type FactChange = 'created' | 'updated' | 'unchanged';

export interface SavedFact {
  fact: MemoryFact;
  change: FactChange;
  /** The value it replaced, when `change` is `updated`. */
  previousValue?: string;
}

export const factLimits = { category: 64, key: 128, value: 2000 } as const;

type FactRow = Omit<MemoryFactsTable, 'id' | 'person_id'> & { id: number };

const columns = ['id', 'category', 'key', 'value', 'created_at', 'updated_at'] as const;

function fromRow(row: FactRow): MemoryFact {
  return { id: row.id, category: row.category, key: row.key, value: row.value, createdAt: row.created_at, updatedAt: row.updated_at };
}

/** Categories and keys are stored trimmed, lower-case, with inner whitespace as `_`: "Home Server" and "home_server" are one key. */
export function factName(text: string): string {
  return text.trim().toLowerCase().replace(/\s+/g, '_');
}

export async function findFactByKey(db: Db, personId: string, category: string, key: string): Promise<MemoryFact | undefined> {
  const row = await db
    .selectFrom('memory_facts')
    .select(columns)
    .where('person_id', '=', personId)
    .where('category', '=', factName(category))
    .where('key', '=', factName(key))
    .executeTakeFirst();
  return row && fromRow(row);
}

/**
 * Creates the fact or replaces its value. Saving the value a fact already has changes
 * nothing (not even updated_at), so it does not make the summary stale either.
 */
export async function upsertFact(db: Db, personId: string, input: FactInput): Promise<SavedFact> {
  const category = factName(input.category);
  const key = factName(input.key);
  const value = input.value.trim();
  if (category === '' || key === '' || value === '') throw new Error('A fact needs a non-empty category, key and value.');
  const before = await findFactByKey(db, personId, category, key);
  if (before?.value === value) return { fact: before, change: 'unchanged' };
  const now = new Date().toISOString();
  const row = await db
    .insertInto('memory_facts')
    .values({ person_id: personId, category, key, value, created_at: now, updated_at: now })
    .onConflict((conflict) => conflict.columns(['person_id', 'category', 'key']).doUpdateSet({ value, updated_at: now }))
    .returning(columns)
    .executeTakeFirstOrThrow();
  return before ? { fact: fromRow(row), change: 'updated', previousValue: before.value } : { fact: fromRow(row), change: 'created' };
}

/** Every fact of the person, by category then key. */
export async function listFacts(db: Db, personId: string): Promise<MemoryFact[]> {
  const rows = await db.selectFrom('memory_facts').select(columns).where('person_id', '=', personId).orderBy('category').orderBy('key').execute();
  return rows.map(fromRow);
}

/** The person's most recently changed facts first. */
export async function recentFacts(db: Db, personId: string, limit: number): Promise<MemoryFact[]> {
  const rows = await db
    .selectFrom('memory_facts')
    .select(columns)
    .where('person_id', '=', personId)
    .orderBy('updated_at', 'desc')
    .orderBy('id', 'desc')
    .limit(limit)
    .execute();
  return rows.map(fromRow);
}

/** Deletes one of the person's facts; answers it when it existed (another person's fact is not theirs to delete). */
export async function deleteFact(db: Db, personId: string, id: number): Promise<MemoryFact | undefined> {
  const row = await db.deleteFrom('memory_facts').where('id', '=', id).where('person_id', '=', personId).returning(columns).executeTakeFirst();
  return row && fromRow(row);
}

export async function deleteFactByKey(db: Db, personId: string, category: string, key: string): Promise<MemoryFact | undefined> {
  const row = await db
    .deleteFrom('memory_facts')
    .where('person_id', '=', personId)
    .where('category', '=', factName(category))
    .where('key', '=', factName(key))
    .returning(columns)
    .executeTakeFirst();
  return row && fromRow(row);
}

// --- Search -----------------------------------------------------------------

export type SearchMode = 'fts' | 'like';

export interface SearchResult {
  /** `fts`: full-text match ranked by BM25; `like`: substring match, for queries full-text search could not answer. */
  mode: SearchMode;
  facts: MemoryFact[];
}

const maximumTerms = 16;
const operators = new Set(['AND', 'OR', 'NOT', 'NEAR']);
const ftsSyntax = /["*^():]|\b(?:AND|OR|NOT|NEAR)\b/;
const stopWords = new Set(
  'a an the is are was were be been am i me my mine you your we our of to in on at for from by with and or not what which who whom where when why how do does did it its this that these those there here about any some'.split(' '),
);

function isSqliteError(error: unknown): boolean {
  return error instanceof Error && (error as { code?: unknown }).code === 'SQLITE_ERROR';
}

/** The query's words, each quoted so FTS5 reads it as a plain phrase; common words go when others remain. */
function quotedTerms(query: string): string[] {
  const words = query
    .split(/\s+/)
    .filter((word) => /[\p{L}\p{N}]/u.test(word) && !operators.has(word))
    .slice(0, maximumTerms);
  const meaningful = words.filter((word) => !stopWords.has(word.toLowerCase().replace(/[^\p{L}\p{N}]/gu, '')));
  return (meaningful.length > 0 ? meaningful : words).map((word) => `"${word.replaceAll('"', '""')}"`);
}

async function matchFts(db: Db, personId: string, expression: string, limit: number): Promise<MemoryFact[]> {
  // bm25() is lower for better matches; a key or value match counts more than a category match.
  // Ranking rowids alone first, then reading the few winning rows, keeps a common word cheap.
  // The person's rows are chosen before ranking, so others' facts can never crowd theirs out of the
  // limit; as a lookup of each match (`rowid in (…)` would make FTS5 look up every one of their ids: 280 ms).
  const { rows } = await sql<FactRow>`
    select f.id, f.category, f.key, f.value, f.created_at, f.updated_at
    from (
      select rowid, rank from memory_facts_fts
      where memory_facts_fts match ${expression} and rank match 'bm25(0.5, 1.0, 1.0)'
        and exists (select 1 from memory_facts mine where mine.id = memory_facts_fts.rowid and mine.person_id = ${personId})
      order by rank limit ${limit}
    ) as hit join memory_facts f on f.id = hit.rowid
    order by hit.rank, f.id desc`.execute(db);
  return rows.map(fromRow);
}

/** Substring match of any word (or of the whole query when it has no words), most matched words first. */
async function matchLike(db: Db, personId: string, query: string, limit: number): Promise<MemoryFact[]> {
  const words = query
    .split(/\s+/)
    .map((word) => word.replace(/["*^()]/g, ''))
    .filter((word) => word !== '' && !operators.has(word))
    .slice(0, maximumTerms);
  const patterns = (words.length > 0 ? words : [query.trim()]).map((word) => `%${word.replace(/[\\%_]/g, '\\$&')}%`);
  const haystack = sql`(f.category || ' ' || f.key || ' ' || f.value)`;
  const hits: RawBuilder<unknown> = sql.join(
    patterns.map((pattern) => sql`(${haystack} like ${pattern} escape '\\')`),
    sql` + `,
  );
  const { rows } = await sql<FactRow>`
    select f.id, f.category, f.key, f.value, f.created_at, f.updated_at
    from memory_facts f
    where f.person_id = ${personId} and (${hits}) > 0
    order by (${hits}) desc, f.updated_at desc, f.id desc
    limit ${limit}`.execute(db);
  return rows.map(fromRow);
}

/**
 * Full-text search ranked by BM25. A query written in FTS5 syntax (quotes, `*`, AND/OR/NOT)
 * is tried as written; plain text becomes an OR of its quoted words. When FTS5 cannot parse
 * the query or finds nothing, a LIKE substring match answers instead.
 */
export async function searchFacts(db: Db, personId: string, query: string, limit = 10): Promise<SearchResult> {
  if (query.trim() === '') return { mode: 'like', facts: [] };
  if (ftsSyntax.test(query)) {
    try {
      const facts = await matchFts(db, personId, query, limit);
      if (facts.length > 0) return { mode: 'fts', facts };
    } catch (error) {
      if (!isSqliteError(error)) throw error;
    }
  }
  const terms = quotedTerms(query);
  if (terms.length > 0) {
    const facts = await matchFts(db, personId, terms.join(' OR '), limit);
    if (facts.length > 0) return { mode: 'fts', facts };
  }
  return { mode: 'like', facts: await matchLike(db, personId, query, limit) };
}

// --- Summary ----------------------------------------------------------------

export interface MemorySummary {
  /** Empty when none has been written. */
  content: string;
  updatedAt: string;
  /** True when facts changed since the summary was written. */
  stale: boolean;
  /** The facts version a summary written now would describe. */
  factsVersion: number;
}

/** The person's summary; a person whose facts never changed has none (an empty one, not stale). */
export async function readSummary(db: Db, personId: string): Promise<MemorySummary> {
  const row = await db
    .selectFrom('memory_summaries')
    .select(['content', 'updated_at', 'facts_version', 'summarised_version'])
    .where('person_id', '=', personId)
    .executeTakeFirst();
  if (!row) return { content: '', updatedAt: '', stale: false, factsVersion: 0 };
  return { content: row.content, updatedAt: row.updated_at, stale: row.summarised_version < row.facts_version, factsVersion: row.facts_version };
}

/** The people whose facts changed since their summary was written. */
export async function peopleWithStaleSummaries(db: Db): Promise<string[]> {
  const rows = await db.selectFrom('memory_summaries').select('person_id').whereRef('summarised_version', '<', 'facts_version').orderBy('person_id').execute();
  return rows.map((row) => row.person_id);
}

/** Stores the person's summary written from their facts as they were at `factsVersion`. */
export async function writeSummary(db: Db, personId: string, content: string, factsVersion: number): Promise<void> {
  await db
    .updateTable('memory_summaries')
    .set({ content, updated_at: new Date().toISOString(), summarised_version: factsVersion })
    .where('person_id', '=', personId)
    .execute();
}

// --- Extraction state ---------------------------------------------------------

export interface DueSession {
  sessionId: string;
  /** Whose session it is: the facts read from it are theirs. */
  personId: string;
  /** Display-buffer positions after this one have not been extracted yet. */
  afterPosition: number;
  /** Shared with the household: others write in it, so nothing in it is anyone's to remember. */
  shared: boolean;
}

/**
 * Sessions with a user message not extracted yet, least recently active first. With
 * `idleSince`, only sessions whose last activity is at or before that ISO time, and those of
 * the people in `eager` whatever their last activity (their "remember now").
 */
export async function sessionsDueForExtraction(db: Db, idleSince?: string, eager: readonly string[] = []): Promise<DueSession[]> {
  const eagerPeople = eager.length > 0 ? sql`s.person_id in (${sql.join(eager)})` : sql`0`;
  const { rows } = await sql<{ session_id: string; person_id: string; after_position: number; shared: number }>`
    select s.id as session_id, coalesce(s.person_id, ${firstOwnerId()}) as person_id, coalesce(m.last_position, 0) as after_position, s.shared
    from sessions s left join session_memory_state m on m.session_id = s.id
    where (${idleSince ?? null} is null or s.last_active <= ${idleSince ?? null} or ${eagerPeople})
      and exists (
        select 1 from messages
        where messages.session_id = s.id and messages.buffer = 'display'
          and messages.position > coalesce(m.last_position, 0) and messages.role = 'user'
      )
    order by s.last_active`.execute(db);
  return rows.map((row) => ({ sessionId: row.session_id, personId: row.person_id, afterPosition: Number(row.after_position), shared: row.shared === 1 }));
}

export interface PositionedMessage {
  position: number;
  message: Message;
}

/** The session's display messages after a position, in order. */
export async function displayMessagesAfter(db: Db, sessionId: string, afterPosition: number): Promise<PositionedMessage[]> {
  const rows = await db
    .selectFrom('messages')
    .select(['id', 'position', 'role', 'content', 'details', 'created_at'])
    .where('session_id', '=', sessionId)
    .where('buffer', '=', 'display')
    .where('position', '>', afterPosition)
    .orderBy('position')
    .execute();
  return rows.map((row) => ({
    position: row.position,
    message: { id: row.id, role: row.role as Message['role'], content: row.content, ...JSON.parse(row.details), created_at: row.created_at },
  }));
}

/**
 * Upserts the facts extracted from a session as the person's whose session it was, and records
 * how far it was read, in one transaction: either all of it happens or none. Answers the facts
 * that changed.
 */
export async function applyExtraction(db: Db, due: Pick<DueSession, 'sessionId' | 'personId'>, throughPosition: number, facts: readonly FactInput[]): Promise<SavedFact[]> {
  const { sessionId, personId } = due;
  return db.transaction().execute(async (transaction) => {
    const saved: SavedFact[] = [];
    for (const fact of facts) saved.push(await upsertFact(transaction, personId, fact));
    // Through a SELECT, so a session deleted meanwhile leaves no state row behind.
    await sql`
      insert into session_memory_state (session_id, extracted_at, last_position)
      select id, ${new Date().toISOString()}, ${throughPosition} from sessions where id = ${sessionId}
      on conflict (session_id) do update set
        extracted_at = excluded.extracted_at,
        last_position = max(session_memory_state.last_position, excluded.last_position)`.execute(transaction);
    return saved.filter((entry) => entry.change !== 'unchanged');
  });
}

export async function extractionState(db: Db, sessionId: string): Promise<{ extractedAt: string; lastPosition: number } | undefined> {
  const row = await db
    .selectFrom('session_memory_state')
    .select(['extracted_at', 'last_position'])
    .where('session_id', '=', sessionId)
    .executeTakeFirst();
  return row && { extractedAt: row.extracted_at, lastPosition: row.last_position };
}

/** The position of the session's last display message, 0 when it has none. */
export async function lastDisplayPosition(db: Db, sessionId: string): Promise<number> {
  const row = await db
    .selectFrom('messages')
    .select((expression) => expression.fn.max('position').as('position'))
    .where('session_id', '=', sessionId)
    .where('buffer', '=', 'display')
    .executeTakeFirst();
  return Number(row?.position ?? 0);
}
