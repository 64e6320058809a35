import { sql } from 'kysely';
import type { Db } from './database.ts';
import type { Message, NewMessage } from './message.ts';
import type { BufferName, MessagesTable } from './schema.ts';

type MessageRow = Pick<MessagesTable, 'role' | 'content' | 'details' | 'created_at'> & { id: number };

function toRow(sessionId: string, buffer: BufferName, message: NewMessage, createdAt: string) {
  const { role, content, ...details } = message;
  return {
    session_id: sessionId,
    buffer,
    // The unique (session, buffer, position) index makes this lookup O(log n): appends never slow down.
    position: sql<number>`(select coalesce(max(position), 0) + 1 from messages where session_id = ${sessionId} and buffer = ${buffer})`,
    role,
    content,
    details: JSON.stringify(details),
    created_at: createdAt,
  };
}

function fromRow(row: MessageRow): Message {
  return { id: row.id, role: row.role as Message['role'], content: row.content, ...JSON.parse(row.details), created_at: row.created_at };
}

/** Appends one message to each of the given buffers, atomically. */
export async function appendMessage(
  db: Db,
  sessionId: string,
  message: NewMessage,
  buffers: readonly BufferName[] = ['display', 'context'],
): Promise<Message[]> {
  const createdAt = new Date().toISOString();
  return db.transaction().execute(async (transaction) => {
    const stored: Message[] = [];
    for (const buffer of buffers) {
      const { id } = await transaction
        .insertInto('messages')
        .values(toRow(sessionId, buffer, message, createdAt))
        .returning('id')
        .executeTakeFirstOrThrow();
      stored.push({ ...message, id, created_at: createdAt });
    }
    await transaction.updateTable('sessions').set({ last_active: createdAt }).where('id', '=', sessionId).execute();
    return stored;
  });
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

/** Appends several messages to each of the given buffers in one transaction, in order. */
export async function appendMessages(
  db: Db,
  sessionId: string,
  messages: readonly NewMessage[],
  buffers: readonly BufferName[] = ['display', 'context'],
): Promise<void> {
  const createdAt = new Date().toISOString();
  await db.transaction().execute(async (transaction) => {
    for (const message of messages) {
      for (const buffer of buffers) {
        await transaction.insertInto('messages').values(toRow(sessionId, buffer, message, createdAt)).execute();
      }
    }
    await transaction.updateTable('sessions').set({ last_active: createdAt }).where('id', '=', sessionId).execute();
  });
}
