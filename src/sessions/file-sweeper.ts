import type { Logger } from '../logger.ts';
import type { Db } from '../store/database.ts';
import { sweepSessionFiles } from '../store/session-files.ts';
import { listSessionIds } from '../store/sessions-repository.ts';

const sweepIntervalMs = 10 * 60 * 1000;

export interface FileSweeperOptions {
  /** SESSION_FILES_DIR. */
  dir: string;
  ttlHours: number;
  db: Db;
  logger: Logger;
}

export interface FileSweeper {
  /** Stops the timer and waits for a sweep under way. */
  stop(): Promise<void>;
}

/** Sweeps the session files now and every ten minutes; a failed sweep is logged and the next one runs as planned. */
export function startFileSweeper(options: FileSweeperOptions): FileSweeper {
  const { logger } = options;
  let current = Promise.resolve();
  const sweep = async () => {
    try {
      const report = await sweepSessionFiles({
        dir: options.dir,
        ttlHours: options.ttlHours,
        knownSessionIds: () => listSessionIds(options.db),
      });
      const { filesRemoved, foldersRemoved, failures } = report;
      if (filesRemoved > 0 || foldersRemoved > 0) logger.info({ filesRemoved, foldersRemoved }, 'expired session files removed');
      if (failures.length > 0) logger.warn({ failures }, 'some expired session files could not be removed');
    } catch (error) {
      logger.error({ err: error }, 'sweeping the session files failed');
    }
  };
  const schedule = () => {
    current = current.then(sweep);
  };
  schedule();
  const timer = setInterval(schedule, sweepIntervalMs);
  timer.unref();
  return {
    async stop() {
      clearInterval(timer);
      await current;
    },
  };
}
