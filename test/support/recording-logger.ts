import { Writable } from 'node:stream';
import { pino } from 'pino';
import type { Logger } from '../../src/logger.ts';

/** A logger at debug level that keeps every line it writes, for tests that read what was logged. */
export function recordingLogger(): { logger: Logger; lines: string[] } {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(chunk.toString('utf8'));
      done();
    },
  });
  return { logger: pino({ level: 'debug' }, stream), lines };
}
