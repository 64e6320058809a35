import type { Db } from './database.ts';

/** A user tool's small persistent key-value store (`ctx.kv`); values are JSON. */

export async function kvGet(db: Db, tool: string, key: string): Promise<unknown> {
  const row = await db.selectFrom('user_tool_kv').select('value').where('tool', '=', tool).where('key', '=', key).executeTakeFirst();
  return row === undefined ? undefined : JSON.parse(row.value);
}

export async function kvSet(db: Db, tool: string, key: string, value: unknown): Promise<void> {
  const row = { tool, key, value: JSON.stringify(value), updated_at: new Date().toISOString() };
  await db
    .insertInto('user_tool_kv')
    .values(row)
    .onConflict((conflict) => conflict.columns(['tool', 'key']).doUpdateSet({ value: row.value, updated_at: row.updated_at }))
    .execute();
}

export async function kvDelete(db: Db, tool: string, key: string): Promise<boolean> {
  const result = await db.deleteFrom('user_tool_kv').where('tool', '=', tool).where('key', '=', key).executeTakeFirst();
  return result.numDeletedRows > 0n;
}

/** Keys in order, optionally only those starting with a prefix. */
export async function kvList(db: Db, tool: string, prefix = ''): Promise<string[]> {
  let query = db.selectFrom('user_tool_kv').select('key').where('tool', '=', tool);
  if (prefix !== '') query = query.where('key', '>=', prefix).where('key', '<', `${prefix}\u{10FFFF}`);
  const rows = await query.orderBy('key').execute();
  return rows.map((row) => row.key);
}
