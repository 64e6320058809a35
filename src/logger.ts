import { fstatSync } from 'node:fs';
import { createRequire } from 'node:module';
import { pino, type Logger } from 'pino';

export type { Logger };

/** LOG_FORMAT: `pretty`, `json`, or empty to choose by where the output goes. */
export type LogFormatSetting = '' | 'pretty' | 'json';

export interface OutputTarget {
  isTerminal: boolean;
  /** stdout is the systemd journal (see stdoutIsJournal). */
  journal: boolean;
}

/**
 * systemd sets JOURNAL_STREAM to the `device:inode` of the stream it connected to the journal;
 * a child whose stdout was redirected elsewhere inherits the variable, so it counts only when
 * stdout is that very stream.
 */
export function stdoutIsJournal(journalStream = process.env.JOURNAL_STREAM): boolean {
  if (!journalStream) return false;
  try {
    const { dev, ino } = fstatSync(1);
    return journalStream === `${dev}:${ino}`;
  } catch {
    return false;
  }
}

export function currentOutput(): OutputTarget {
  return { isTerminal: process.stdout.isTTY === true, journal: stdoutIsJournal() };
}

export function resolveLogFormat(setting: LogFormatSetting, output: OutputTarget): 'pretty' | 'json' {
  if (setting !== '') return setting;
  return output.isTerminal || output.journal ? 'pretty' : 'json';
}

/** Readable lines for a person (terminal or journalctl); JSON, one object a line, for anything that reads the output. */
export function createLogger(level: string, setting: LogFormatSetting = '', output: OutputTarget = currentOutput()): Logger {
  if (resolveLogFormat(setting, output) === 'json') return pino({ level, base: undefined });
  // The start-up summary's fields are for machines; its message already says them.
  const ignore = 'pid,hostname,startup';
  // Required here, not imported: JSON output (systemd with LOG_FORMAT=json, every test child) never needs its 60-130 ms of loading.
  const pretty = createRequire(import.meta.url)('pino-pretty') as typeof import('pino-pretty');
  const stream = output.isTerminal
    ? pretty({ colorize: true, translateTime: 'SYS:yyyy-mm-dd HH:MM:ss', ignore, sync: true })
    : // The journal stamps each entry and shows no colour codes; one record stays one entry.
      pretty({ colorize: false, translateTime: false, ignore: `${ignore},time`, singleLine: true, sync: true });
  return pino({ level, base: undefined }, stream);
}
