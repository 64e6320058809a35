import type { Logger } from '../logger.ts';
import type { Db } from '../store/database.ts';
import { removeSessionFolder } from '../store/session-files.ts';
import { deleteSession, listEmptySessionIds } from '../store/sessions-repository.ts';

/** How long a session may stay without a message before start-up removes it. */
export const emptySessionLifetimeMs = 24 * 60 * 60 * 1000;

/**
 * At start: removes the sessions that were opened and never written to (each New session
 * leaves one until its first message), with any file uploaded to them. Answers how many.
 */
export async function removeStaleEmptySessions(db: Db, sessionFilesDir: string, logger: Logger, now = Date.now()): Promise<number> {
  const ids = await listEmptySessionIds(db, new Date(now - emptySessionLifetimeMs).toISOString());
  for (const id of ids) {
    await deleteSession(db, id);
    await removeSessionFolder(sessionFilesDir, id);
  }
  if (ids.length > 0) logger.info({ removed: ids.length }, 'removed sessions that never got a message');
  return ids.length;
}
