import { sql, type Kysely } from 'kysely';

// Frozen: never edit a migration that has shipped; add a new dated file instead.

// The documents libraries: a person's own ('mine', owner_person_id set) and the household's
// (owner_person_id null). Each document is split into passages, each with its embedding vector
// (float32 bytes, of the model named beside it) and a full-text index (FTS5, external content,
// kept in step by triggers). A person's own documents go with them; the originals are files
// named by the document's id, which the library sweeps when their row is gone.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('documents')
    .addColumn('id', 'text', (column) => column.primaryKey())
    .addColumn('name', 'text', (column) => column.notNull())
    .addColumn('library', 'text', (column) => column.notNull())
    .addColumn('owner_person_id', 'text', (column) => column.references('people.id').onDelete('cascade'))
    .addColumn('added_by', 'text', (column) => column.references('people.id').onDelete('set null'))
    .addColumn('media_type', 'text', (column) => column.notNull())
    .addColumn('size', 'integer', (column) => column.notNull())
    .addColumn('pages', 'integer')
    .addColumn('passages', 'integer')
    .addColumn('status', 'text', (column) => column.notNull())
    .addColumn('progress', 'real')
    .addColumn('error', 'text')
    .addColumn('added_at', 'text', (column) => column.notNull())
    .addColumn('source', 'text', (column) => column.notNull())
    .addColumn('stored_path', 'text', (column) => column.notNull())
    .addColumn('source_path', 'text')
    .addColumn('embedding_model', 'text')
    .addColumn('content_hash', 'text', (column) => column.notNull())
    .execute();
  await db.schema.createIndex('documents_owner').on('documents').columns(['owner_person_id', 'added_at']).execute();
  await db.schema.createIndex('documents_status').on('documents').column('status').execute();
  await db.schema.createIndex('documents_source_path').on('documents').column('source_path').execute();

  await db.schema
    .createTable('document_passages')
    .addColumn('id', 'integer', (column) => column.primaryKey().autoIncrement())
    .addColumn('document_id', 'text', (column) => column.notNull().references('documents.id').onDelete('cascade'))
    .addColumn('ordinal', 'integer', (column) => column.notNull())
    .addColumn('page', 'integer')
    .addColumn('heading', 'text')
    .addColumn('text', 'text', (column) => column.notNull())
    .addColumn('vector', 'blob')
    .addColumn('embedding_model', 'text')
    .addUniqueConstraint('document_passages_ordinal', ['document_id', 'ordinal'])
    .execute();

  await sql`create virtual table document_passages_fts using fts5(
    heading, text,
    content = 'document_passages', content_rowid = 'id',
    tokenize = 'porter unicode61 remove_diacritics 2'
  )`.execute(db);
  await sql`create trigger document_passages_after_insert after insert on document_passages begin
    insert into document_passages_fts (rowid, heading, text) values (new.id, new.heading, new.text);
  end`.execute(db);
  await sql`create trigger document_passages_after_delete after delete on document_passages begin
    insert into document_passages_fts (document_passages_fts, rowid, heading, text) values ('delete', old.id, old.heading, old.text);
  end`.execute(db);
  // Only a change of the indexed text touches the index: storing a vector does not.
  await sql`create trigger document_passages_after_update after update of heading, text on document_passages begin
    insert into document_passages_fts (document_passages_fts, rowid, heading, text) values ('delete', old.id, old.heading, old.text);
    insert into document_passages_fts (rowid, heading, text) values (new.id, new.heading, new.text);
  end`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const trigger of ['document_passages_after_insert', 'document_passages_after_delete', 'document_passages_after_update']) {
    await sql`drop trigger ${sql.id(trigger)}`.execute(db);
  }
  await sql`drop table document_passages_fts`.execute(db);
  await db.schema.dropTable('document_passages').execute();
  await db.schema.dropTable('documents').execute();
}
