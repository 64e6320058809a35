import type { Db } from './database.ts';

export const todoStatuses = ['pending', 'in_progress', 'done'] as const;
export type TodoStatus = (typeof todoStatuses)[number];

export interface TodoItem {
  text: string;
  status: TodoStatus;
}

function isTodoItem(value: unknown): value is TodoItem {
  if (typeof value !== 'object' || value === null) return false;
  const { text, status } = value as Record<string, unknown>;
  return typeof text === 'string' && todoStatuses.includes(status as TodoStatus);
}

/** The session's checklist; empty when none was set. */
export async function readTodoList(db: Db, sessionId: string): Promise<TodoItem[]> {
  const row = await db.selectFrom('todo_lists').select('items').where('session_id', '=', sessionId).executeTakeFirst();
  if (!row) return [];
  const items: unknown = JSON.parse(row.items);
  return Array.isArray(items) ? items.filter(isTodoItem).map(({ text, status }) => ({ text, status })) : [];
}

export async function saveTodoList(db: Db, sessionId: string, items: readonly TodoItem[]): Promise<void> {
  const updatedAt = new Date().toISOString();
  const serialized = JSON.stringify(items.map(({ text, status }) => ({ text, status })));
  await db
    .insertInto('todo_lists')
    .values({ session_id: sessionId, items: serialized, updated_at: updatedAt })
    .onConflict((conflict) => conflict.column('session_id').doUpdateSet({ items: serialized, updated_at: updatedAt }))
    .execute();
}
