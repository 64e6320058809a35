import { sql, type Kysely } from 'kysely';

// Frozen: never edit a migration that has shipped; add a new dated file instead.

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('memory_facts')
    .addColumn('id', 'integer', (column) => column.primaryKey().autoIncrement())
    .addColumn('category', 'text', (column) => column.notNull())
    .addColumn('key', 'text', (column) => column.notNull())
    .addColumn('value', 'text', (column) => column.notNull())
    .addColumn('created_at', 'text', (column) => column.notNull())
    .addColumn('updated_at', 'text', (column) => column.notNull())
    .addUniqueConstraint('memory_facts_category_key', ['category', 'key'])
    .execute();

  // One row. facts_version counts changes to memory_facts (the triggers below bump it);
  // summarised_version is the version the stored summary was written from.
  await db.schema
    .createTable('memory_summary')
    .addColumn('id', 'integer', (column) => column.primaryKey().check(sql`id = 1`))
    .addColumn('content', 'text', (column) => column.notNull())
    .addColumn('updated_at', 'text', (column) => column.notNull())
    .addColumn('facts_version', 'integer', (column) => column.notNull())
    .addColumn('summarised_version', 'integer', (column) => column.notNull())
    .execute();
  await db.insertInto('memory_summary').values({ id: 1, content: '', updated_at: '', facts_version: 0, summarised_version: 0 }).execute();

  // last_position: the highest display-buffer position the last extraction covered.
  await db.schema
    .createTable('session_memory_state')
    .addColumn('session_id', 'text', (column) => column.primaryKey())
    .addColumn('extracted_at', 'text', (column) => column.notNull())
    .addColumn('last_position', 'integer', (column) => column.notNull())
    .execute();

  await sql`create virtual table memory_facts_fts using fts5(
    category, key, value,
    content = 'memory_facts', content_rowid = 'id',
    tokenize = 'porter unicode61 remove_diacritics 2'
  )`.execute(db);
  await sql`create trigger memory_facts_after_insert after insert on memory_facts begin
    insert into memory_facts_fts (rowid, category, key, value) values (new.id, new.category, new.key, new.value);
    update memory_summary set facts_version = facts_version + 1 where id = 1;
  end`.execute(db);
  await sql`create trigger memory_facts_after_delete after delete on memory_facts begin
    insert into memory_facts_fts (memory_facts_fts, rowid, category, key, value) values ('delete', old.id, old.category, old.key, old.value);
    update memory_summary set facts_version = facts_version + 1 where id = 1;
  end`.execute(db);
  await sql`create trigger memory_facts_after_update after update on memory_facts begin
    insert into memory_facts_fts (memory_facts_fts, rowid, category, key, value) values ('delete', old.id, old.category, old.key, old.value);
    insert into memory_facts_fts (rowid, category, key, value) values (new.id, new.category, new.key, new.value);
    update memory_summary set facts_version = facts_version + 1 where id = 1;
  end`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const trigger of ['memory_facts_after_insert', 'memory_facts_after_delete', 'memory_facts_after_update']) {
    await sql`drop trigger ${sql.id(trigger)}`.execute(db);
  }
  await sql`drop table memory_facts_fts`.execute(db);
  for (const table of ['session_memory_state', 'memory_summary', 'memory_facts']) {
    await db.schema.dropTable(table).execute();
  }
}
