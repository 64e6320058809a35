// Helpers that turn whatever a client library throws into words a person can act on.
import type { LlmError } from './types.ts';
import { messageOf } from '../failure.ts';

export const abortedError: LlmError = { code: 'aborted', message: 'The request was cancelled.' };

const longestMessage = 500;

export function errorMessage(error: unknown): string {
  const text = messageOf(error);
  const oneLine = text.replace(/\s+/g, ' ').trim();
  return oneLine.length > longestMessage ? `${oneLine.slice(0, longestMessage)}…` : oneLine;
}

/**
 * Why a connection could not be made or broke, e.g. "ECONNREFUSED" or "other side closed";
 * undefined when the error is not a network failure. Node's fetch wraps the socket error
 * in one or more `cause`s.
 */
export function networkFailureReason(error: unknown): string | undefined {
  let socketMessage: string | undefined;
  let current: unknown = error;
  for (let depth = 0; depth < 6 && isRecord(current); depth += 1) {
    const code = current['code'];
    if (typeof code === 'string' && /^E[A-Z0-9_]+$/.test(code)) return code;
    if (typeof code === 'string' && code.startsWith('UND_ERR')) {
      socketMessage = typeof current['message'] === 'string' ? current['message'] : code;
    }
    current = current['cause'];
  }
  return socketMessage;
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
