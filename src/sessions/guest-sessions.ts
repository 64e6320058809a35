import type { Logger } from '../logger.ts';
import type { Db } from '../store/database.ts';
import { listIdleSessionIdsOfRole } from '../store/sessions-repository.ts';
import type { Sessions } from './sessions.ts';

/** How long a guest's session lasts after its last activity (docs/people.md: a kiosk keeps nothing). */
export const guestSessionLifetimeMs = 24 * 60 * 60 * 1000;
const sweepIntervalMs = 10 * 60 * 1000;

/**
 * Deletes the guests' sessions idle for a day, through the session service: a run still going is
 * stopped, its files and images go with it, and open pages are told. Answers how many.
 */
export async function removeIdleGuestSessions(db: Db, sessions: Pick<Sessions, 'delete'>, logger: Logger, now = Date.now()): Promise<number> {
  const ids = await listIdleSessionIdsOfRole(db, 'guest', new Date(now - guestSessionLifetimeMs).toISOString());
  for (const id of ids) await sessions.delete(id);
  if (ids.length > 0) logger.info({ removed: ids.length }, "removed guests' sessions idle for a day");
  return ids.length;
}

export interface GuestSessionSweeper {
  /** Stops the timer and waits for a sweep under way. */
  stop(): Promise<void>;
}

/** Sweeps now and every ten minutes; a failed sweep is logged and the next one runs as planned. */
export function startGuestSessionSweeper(options: { db: Db; sessions: Pick<Sessions, 'delete'>; logger: Logger }): GuestSessionSweeper {
  const { db, sessions, logger } = options;
  let current = Promise.resolve();
  const sweep = async () => {
    try {
      await removeIdleGuestSessions(db, sessions, logger);
    } catch (error) {
      logger.error({ err: error }, "removing guests' idle sessions failed");
    }
  };
  const schedule = () => {
    current = current.then(sweep);
  };
  const timer = setInterval(schedule, sweepIntervalMs);
  timer.unref();
  schedule();
  return {
    async stop() {
      clearInterval(timer);
      await current;
    },
  };
}
