// Which Hearth owns a DATA_DIR. The server holds an exclusive SQLite lock on DATA_DIR/hearth.lock
// for as long as it runs; `hearth restore` takes the same lock before it touches anything. The
// lock is the kernel's (fcntl, through SQLite), so it ends with the process however it ends:
// a crash or SIGKILL leaves no stale pid file, a reused pid fools nothing, and a Hearth listening
// on another port or hung is still seen, which asking the port or /health would miss.
import { chownSync, mkdirSync, statSync } from 'node:fs';
import path from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import { messageOf } from '../failure.ts';

export const lockFileName = 'hearth.lock';

/** The lock, held until `release` (or the process's end). */
export interface InstanceLock {
  readonly file: string;
  release(): void;
}

export type LockAttempt = { ok: true; lock: InstanceLock } | { ok: false; message: string };

/**
 * Takes DATA_DIR's lock, waiting up to `waitMs` for one held by a Hearth that is still closing.
 * Refused while another process holds it.
 */
export function acquireInstanceLock(dataDir: string, waitMs = 0): LockAttempt {
  const file = path.join(path.resolve(dataDir), lockFileName);
  mkdirSync(path.dirname(file), { recursive: true });
  let database: SqliteDatabase.Database;
  try {
    database = new SqliteDatabase(file, { timeout: waitMs });
  } catch (error) {
    return { ok: false, message: `Cannot open ${file}: ${messageOf(error)}.` };
  }
  matchOwner(file, path.dirname(file));
  try {
    // In exclusive locking mode SQLite keeps the lock of its first write until the connection closes.
    database.pragma('locking_mode = EXCLUSIVE');
    // The lock is what counts, not the row: no journal file and no fsync, which took a start
    // tens of milliseconds on a busy disk (issue 38).
    database.pragma('journal_mode = MEMORY');
    database.pragma('synchronous = OFF');
    database.exec('BEGIN EXCLUSIVE; CREATE TABLE IF NOT EXISTS holder (started_at TEXT); DELETE FROM holder; INSERT INTO holder VALUES (datetime()); COMMIT;');
  } catch (error) {
    database.close();
    if ((error as { code?: string }).code === 'SQLITE_BUSY') {
      return { ok: false, message: `A Hearth is running on DATA_DIR ${path.dirname(file)} (it holds ${file}).` };
    }
    return { ok: false, message: `Cannot lock ${file}: ${messageOf(error)}.` };
  }
  return { ok: true, lock: { file, release: () => database.close() } };
}

/** Whether a process holds DATA_DIR's lock now; creates nothing when no Hearth ever ran there. */
export function instanceRunning(dataDir: string): boolean {
  const file = path.join(path.resolve(dataDir), lockFileName);
  let database: SqliteDatabase.Database;
  try {
    database = new SqliteDatabase(file, { fileMustExist: true, timeout: 0 });
  } catch {
    return false;
  }
  try {
    database.exec('BEGIN IMMEDIATE; ROLLBACK;');
    return false;
  } catch (error) {
    return (error as { code?: string }).code === 'SQLITE_BUSY';
  } finally {
    database.close();
  }
}

/** Root making a file in a folder someone else owns (`sudo npx hearth restore`) gives it to that owner, so the service can use it. */
export function matchOwner(file: string, folder: string): void {
  if (process.getuid?.() !== 0) return;
  const owner = statSync(folder);
  const current = statSync(file);
  if (current.uid !== owner.uid || current.gid !== owner.gid) chownSync(file, owner.uid, owner.gid);
}
