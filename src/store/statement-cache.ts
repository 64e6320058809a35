import type { Database as SqliteDatabase, Statement } from 'better-sqlite3';

const maximumStatements = 256;

/**
 * Hands Kysely the same prepared statement for the same SQL instead of compiling it
 * again for every query; the oldest entries go once the cache is full. Safe because
 * Kysely runs each statement to completion synchronously.
 */
export function withStatementCache(sqlite: SqliteDatabase): { prepare(sql: string): Statement; close(): void } {
  const statements = new Map<string, Statement>();
  return {
    prepare(sql) {
      let statement = statements.get(sql);
      if (statement) return statement;
      statement = sqlite.prepare(sql);
      if (statements.size >= maximumStatements) statements.delete(statements.keys().next().value!);
      statements.set(sql, statement);
      return statement;
    },
    close() {
      statements.clear();
      sqlite.close();
    },
  };
}
