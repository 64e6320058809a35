import { sql } from 'kysely';
import type { Db } from './database.ts';
import type { Message, NewMessage } from './message.ts';
import type { BufferName, MessagesTable } from './schema.ts';

type MessageRow = Pick<MessagesTable, 'role' | 'content' | 'details' | 'created_at'> & { id: number };

function toRow(sessionId: string, buffer: BufferName, position: number, message: NewMessage, createdAt: string) {
  const { role, content, ...details } = message;
  return { session_id: sessionId, buffer, position, role, content, details: JSON.stringify(details), created_at: createdAt };
}

function fromRow(row: MessageRow): Message {
  return { id: row.id, role: row.role as Message['role'], content: row.content, ...JSON.parse(row.details), created_at: row.created_at };
}

/** Appends one message to each of the given buffers; answers the stored copies, one per buffer. */
export async function appendMessage(
  db: Db,
  sessionId: string,
  message: NewMessage,
  buffers: readonly BufferName[] = ['display', 'context'],
): Promise<Message[]> {
  return appendMessages(db, sessionId, [message], buffers);
}

/**
 * Appends messages, in order, to each of the given buffers with one INSERT, whatever the
 * session's length: the next positions come from the (session, buffer, position) index.
 */
export async function appendMessages(
  db: Db,
  sessionId: string,
  messages: readonly NewMessage[],
  buffers: readonly BufferName[] = ['display', 'context'],
): Promise<Message[]> {
  if (messages.length === 0 || buffers.length === 0) return [];
  const createdAt = new Date().toISOString();
  const lastPositions = await db
    .selectNoFrom((expression) =>
      buffers.map((buffer) =>
        expression
          .selectFrom('messages')
          .select((inner) => inner.fn.max('position').as('position'))
          .where('session_id', '=', sessionId)
          .where('buffer', '=', buffer)
          .as(buffer),
      ),
    )
    .executeTakeFirstOrThrow();
  const rows = buffers.flatMap((buffer) => {
    const last = Number((lastPositions as Record<string, number | null>)[buffer] ?? 0);
    return messages.map((message, index) => toRow(sessionId, buffer, last + index + 1, message, createdAt));
  });
  const inserted = await db.insertInto('messages').values(rows).returning('id').execute();
  await db.updateTable('sessions').set({ last_active: createdAt }).where('id', '=', sessionId).execute();
  return inserted.map(({ id }, index) => ({ ...messages[index % messages.length]!, id, created_at: createdAt }));
}

export async function listMessages(db: Db, sessionId: string, buffer: BufferName): Promise<Message[]> {
  const rows = await db
    .selectFrom('messages')
    .select(['id', 'role', 'content', 'details', 'created_at'])
    .where('session_id', '=', sessionId)
    .where('buffer', '=', buffer)
    .orderBy('position')
    .execute();
  return rows.map(fromRow);
}

export async function countMessages(db: Db, sessionId: string, buffer: BufferName): Promise<number> {
  const { count } = await db
    .selectFrom('messages')
    .select((expression) => expression.fn.countAll<number>().as('count'))
    .where('session_id', '=', sessionId)
    .where('buffer', '=', buffer)
    .executeTakeFirstOrThrow();
  return Number(count);
}

/**
 * Replaces the context messages up to and including `throughId` with one message in their
 * place (compression), in one transaction; the later messages keep their positions and the
 * display buffer is not touched. Answers the stored message.
 */
export async function replaceContextPrefix(db: Db, sessionId: string, throughId: number, message: NewMessage): Promise<Message> {
  return db.transaction().execute(async (transaction) => {
    const last = await transaction
      .selectFrom('messages')
      .select('position')
      .where('id', '=', throughId)
      .where('session_id', '=', sessionId)
      .where('buffer', '=', 'context')
      .executeTakeFirst();
    if (!last) throw new Error(`Message ${throughId} is not in the context of session ${sessionId}.`);
    await transaction
      .deleteFrom('messages')
      .where('session_id', '=', sessionId)
      .where('buffer', '=', 'context')
      .where('position', '<=', last.position)
      .execute();
    const createdAt = new Date().toISOString();
    const { id } = await transaction
      .insertInto('messages')
      .values(toRow(sessionId, 'context', last.position, message, createdAt))
      .returning('id')
      .executeTakeFirstOrThrow();
    return { ...message, id, created_at: createdAt };
  });
}

/** Where a branch starts: at a message (it goes too) or after it (it stays). */
export interface BranchPoint {
  messageId: number;
  including: boolean;
}

async function branchPosition(db: Db, sessionId: string, buffer: BufferName, { messageId, including }: BranchPoint): Promise<number> {
  const row = await db
    .selectFrom('messages')
    .select('position')
    .where('id', '=', messageId)
    .where('session_id', '=', sessionId)
    .where('buffer', '=', buffer)
    .executeTakeFirst();
  if (!row) throw new Error(`Message ${messageId} is not in the ${buffer} buffer of session ${sessionId}.`);
  return including ? row.position : row.position + 1;
}

/** Marks the display messages from the branch point on as superseded (an edit or regenerate replaced them); they stay, in place. */
export async function supersedeDisplayFrom(db: Db, sessionId: string, point: BranchPoint): Promise<void> {
  const from = await branchPosition(db, sessionId, 'display', point);
  await db
    .updateTable('messages')
    .set({ details: sql<string>`json_set(details, '$.superseded', json('true'))` })
    .where('session_id', '=', sessionId)
    .where('buffer', '=', 'display')
    .where('position', '>=', from)
    .execute();
}

/** Deletes the context messages from the branch point on, so the model never sees the replaced branch. */
export async function truncateContextFrom(db: Db, sessionId: string, point: BranchPoint): Promise<void> {
  const from = await branchPosition(db, sessionId, 'context', point);
  await db.deleteFrom('messages').where('session_id', '=', sessionId).where('buffer', '=', 'context').where('position', '>=', from).execute();
}

/**
 * The context copy of a user message from the display: both copies are written by one insert,
 * so they share role, content and time. Undefined once compression has summarised it.
 */
export async function findContextCopy(db: Db, sessionId: string, message: Message): Promise<Message | undefined> {
  const row = await db
    .selectFrom('messages')
    .select(['id', 'role', 'content', 'details', 'created_at'])
    .where('session_id', '=', sessionId)
    .where('buffer', '=', 'context')
    .where('role', '=', message.role)
    .where('created_at', '=', message.created_at)
    .where('content', '=', message.content)
    .orderBy('position')
    .executeTakeFirst();
  return row && fromRow(row);
}

/** The id of the session's last display message, or 0 when it has none. */
export async function lastDisplayMessageId(db: Db, sessionId: string): Promise<number> {
  const { id } = await db
    .selectFrom('messages')
    .select((expression) => expression.fn.max('id').as('id'))
    .where('session_id', '=', sessionId)
    .where('buffer', '=', 'display')
    .executeTakeFirstOrThrow();
  return Number(id ?? 0);
}

/** Removes from the display history every message after `afterId` (a run that should leave no trace); the context keeps them. */
export async function dropDisplayMessagesAfter(db: Db, sessionId: string, afterId: number): Promise<number> {
  const result = await db
    .deleteFrom('messages')
    .where('session_id', '=', sessionId)
    .where('buffer', '=', 'display')
    .where('id', '>', afterId)
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}
