import { pino, type Logger } from 'pino';
import pretty from 'pino-pretty';

export type { Logger };

/** Readable lines for a person at a terminal; JSON, one object a line, for anything that reads the output. */
export function createLogger(level: string, readable = process.stdout.isTTY === true): Logger {
  if (!readable) return pino({ level, base: undefined });
  // The start-up summary's fields are for machines; its message already says them.
  const stream = pretty({ colorize: true, translateTime: 'SYS:yyyy-mm-dd HH:MM:ss', ignore: 'pid,hostname,startup', sync: true });
  return pino({ level, base: undefined }, stream);
}
