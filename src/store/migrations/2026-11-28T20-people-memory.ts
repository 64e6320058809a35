import { sql, type Kysely } from 'kysely';

// Frozen: never edit a migration that has shipped; add a new dated file instead.

// Long-term memory belongs to a person: each fact is someone's (unique per person, category and
// key), and each person has their own summary, made stale by changes to their facts only. The
// facts and the summary an install has become the first owner's. Removing a person removes what
// was remembered about them. session_memory_state stays per session.
export async function up(db: Kysely<any>): Promise<void> {
  for (const trigger of ['memory_facts_after_insert', 'memory_facts_after_delete', 'memory_facts_after_update']) {
    await sql`drop trigger ${sql.id(trigger)}`.execute(db);
  }
  const owner = sql`(select id from people where role = 'owner' order by created_at limit 1)`;

  // SQLite cannot change a unique constraint in place: the table is made again with the same ids,
  // which the full-text index (content_rowid = 'id') goes on pointing at.
  await db.schema
    .createTable('memory_facts_of_people')
    .addColumn('id', 'integer', (column) => column.primaryKey().autoIncrement())
    .addColumn('person_id', 'text', (column) => column.notNull())
    .addColumn('category', 'text', (column) => column.notNull())
    .addColumn('key', 'text', (column) => column.notNull())
    .addColumn('value', 'text', (column) => column.notNull())
    .addColumn('created_at', 'text', (column) => column.notNull())
    .addColumn('updated_at', 'text', (column) => column.notNull())
    .addUniqueConstraint('memory_facts_person_category_key', ['person_id', 'category', 'key'])
    .execute();
  await sql`insert into memory_facts_of_people (id, person_id, category, key, value, created_at, updated_at)
    select id, ${owner}, category, key, value, created_at, updated_at from memory_facts`.execute(db);
  // A deleted fact's id is never given again: the new table continues the old one's count.
  await sql`insert into sqlite_sequence (name, seq) select 'memory_facts_of_people', seq from sqlite_sequence where name = 'memory_facts'
    and not exists (select 1 from sqlite_sequence where name = 'memory_facts_of_people')`.execute(db);
  await sql`update sqlite_sequence set seq = max(seq, (select seq from sqlite_sequence where name = 'memory_facts'))
    where name = 'memory_facts_of_people'`.execute(db);
  await db.schema.dropTable('memory_facts').execute();
  await sql`alter table memory_facts_of_people rename to memory_facts`.execute(db);

  // One row a person, made by the first change to their facts. facts_version counts those changes;
  // summarised_version is the version their stored summary was written from.
  await db.schema
    .createTable('memory_summaries')
    .addColumn('person_id', 'text', (column) => column.primaryKey())
    .addColumn('content', 'text', (column) => column.notNull())
    .addColumn('updated_at', 'text', (column) => column.notNull())
    .addColumn('facts_version', 'integer', (column) => column.notNull())
    .addColumn('summarised_version', 'integer', (column) => column.notNull())
    .execute();
  await sql`insert into memory_summaries (person_id, content, updated_at, facts_version, summarised_version)
    select ${owner}, content, updated_at, facts_version, summarised_version from memory_summary where id = 1`.execute(db);
  await db.schema.dropTable('memory_summary').execute();

  const bump = (person: 'new' | 'old') => sql.raw(`insert into memory_summaries (person_id, content, updated_at, facts_version, summarised_version)
    values (${person}.person_id, '', '', 1, 0)
    on conflict (person_id) do update set facts_version = facts_version + 1;`);
  await sql`create trigger memory_facts_after_insert after insert on memory_facts begin
    insert into memory_facts_fts (rowid, category, key, value) values (new.id, new.category, new.key, new.value);
    ${bump('new')}
  end`.execute(db);
  await sql`create trigger memory_facts_after_delete after delete on memory_facts begin
    insert into memory_facts_fts (memory_facts_fts, rowid, category, key, value) values ('delete', old.id, old.category, old.key, old.value);
    ${bump('old')}
  end`.execute(db);
  await sql`create trigger memory_facts_after_update after update on memory_facts begin
    insert into memory_facts_fts (memory_facts_fts, rowid, category, key, value) values ('delete', old.id, old.category, old.key, old.value);
    insert into memory_facts_fts (rowid, category, key, value) values (new.id, new.category, new.key, new.value);
    ${bump('new')}
  end`.execute(db);
  // After the facts (whose triggers touch the summary row), the summary itself.
  await sql`create trigger people_after_delete_memory after delete on people begin
    delete from memory_facts where person_id = old.id;
    delete from memory_summaries where person_id = old.id;
  end`.execute(db);
}

export async function down(): Promise<void> {
  throw new Error('2026-11-28T20-people-memory cannot be undone: facts of several people cannot share one memory.');
}
