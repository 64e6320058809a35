import { Cron } from 'croner';
import type { ScheduleTiming } from '../store/schedules-repository.ts';
import { messageOf } from '../failure.ts';

const minuteMs = 60_000;
const unitMs: Record<string, number> = { s: 1000, m: minuteMs, h: 60 * minuteMs, d: 24 * 60 * minuteMs };

/** A refused schedule field: which one, and why. */
export interface FieldProblem {
  field: string;
  message: string;
}

export type Checked<T> = { ok: true; value: T } | ({ ok: false } & FieldProblem);

export function isTimeZone(zone: string): boolean {
  if (zone === '') return false;
  try {
    wallClockFormat(zone);
    return true;
  } catch {
    return false;
  }
}

// Building an Intl.DateTimeFormat costs about a third of a millisecond, formatting with one a few
// microseconds: a list of a thousand schedules formats four times each. Bounded, as any casing of a zone's name is valid.
const wallClockFormats = new Map<string, Intl.DateTimeFormat>();
const mostWallClockFormats = 1000;

/** The zone's year-to-second wall clock format, made once per zone; throws for a zone that does not exist. */
function wallClockFormat(timezone: string): Intl.DateTimeFormat {
  let format = wallClockFormats.get(timezone);
  if (format === undefined) {
    format = new Intl.DateTimeFormat('en-GB', {
      timeZone: timezone,
      hourCycle: 'h23',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
    });
    if (wallClockFormats.size >= mostWallClockFormats) wallClockFormats.clear();
    wallClockFormats.set(timezone, format);
  }
  return format;
}

export function serverTimeZone(): string {
  return Intl.DateTimeFormat().resolvedOptions().timeZone;
}

/** `30m`, `2h`, `1d`, `90s` or a number of milliseconds; at least one minute. */
export function parseEvery(every: string | number): Checked<number> {
  let ms: number | undefined;
  if (typeof every === 'number') ms = every;
  else {
    const match = /^\s*(\d+)\s*(ms|s|m|h|d)?\s*$/.exec(every);
    if (match) ms = match[2] === undefined || match[2] === 'ms' ? Number(match[1]) : Number(match[1]) * unitMs[match[2]]!;
  }
  if (ms === undefined || !Number.isSafeInteger(ms)) return { ok: false, field: 'every', message: `every: expected a duration like "30m", "2h" or "1d", got ${JSON.stringify(every)}` };
  if (ms < minuteMs) return { ok: false, field: 'every', message: `every: at least one minute, got ${JSON.stringify(every)}` };
  return { ok: true, value: ms };
}

export function checkCron(pattern: string, timezone: string): Checked<string> {
  const fields = pattern.trim().split(/\s+/).length;
  if (fields !== 5 && fields !== 6) return { ok: false, field: 'cron', message: `cron: expected 5 or 6 fields, got ${fields} in ${JSON.stringify(pattern)}` };
  try {
    const cron = new Cron(pattern, { timezone, paused: true });
    if (cron.nextRun(new Date(0)) === null) return { ok: false, field: 'cron', message: `cron: ${JSON.stringify(pattern)} never fires` };
  } catch (error) {
    return { ok: false, field: 'cron', message: `cron: ${JSON.stringify(pattern)} is not a valid pattern (${messageOf(error)})` };
  }
  return { ok: true, value: pattern.trim() };
}

/** An ISO 8601 time with its offset (or Z), after `now`. */
export function checkAt(at: string, now: Date): Checked<string> {
  const withOffset = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/;
  const instant = new Date(at);
  if (!withOffset.test(at) || Number.isNaN(instant.getTime())) {
    return { ok: false, field: 'at', message: `at: expected an ISO 8601 time with its offset, like "2026-11-24T09:00:00+01:00", got ${JSON.stringify(at)}` };
  }
  if (instant.getTime() <= now.getTime()) return { ok: false, field: 'at', message: `at: ${at} is in the past` };
  return { ok: true, value: at };
}

/** The schedule's runs strictly after `after`, at most `count`; `every` counts from `anchor` (its creation). */
export function nextRuns(timing: ScheduleTiming, timezone: string, anchor: Date, after: Date, count: number): Date[] {
  if ('cron' in timing) return new Cron(timing.cron, { timezone, paused: true }).nextRuns(count, after);
  if ('at' in timing) {
    const instant = new Date(timing.at);
    return instant.getTime() > after.getTime() && count > 0 ? [instant] : [];
  }
  const elapsed = after.getTime() - anchor.getTime();
  const first = anchor.getTime() + (Math.floor(elapsed / timing.everyMs) + 1) * timing.everyMs;
  return Array.from({ length: count }, (_, index) => new Date(first + index * timing.everyMs));
}

export function nextRunAfter(timing: ScheduleTiming, timezone: string, anchor: Date, after: Date): Date | null {
  return nextRuns(timing, timezone, anchor, after, 1)[0] ?? null;
}

/** An ISO 8601 time with the zone's offset at that instant, e.g. `2026-03-29T03:00:00+02:00`. */
export function isoInZone(instant: Date, timezone: string): string {
  const parts = Object.fromEntries(
    wallClockFormat(timezone)
      .formatToParts(instant)
      .map((part) => [part.type, part.value]),
  );
  const wallClock = Date.UTC(Number(parts.year), Number(parts.month) - 1, Number(parts.day), Number(parts.hour), Number(parts.minute), Number(parts.second));
  const offsetMinutes = Math.round((wallClock - Math.floor(instant.getTime() / 1000) * 1000) / minuteMs);
  const sign = offsetMinutes < 0 ? '-' : '+';
  const hours = String(Math.floor(Math.abs(offsetMinutes) / 60)).padStart(2, '0');
  const minutes = String(Math.abs(offsetMinutes) % 60).padStart(2, '0');
  return `${parts.year}-${parts.month}-${parts.day}T${parts.hour}:${parts.minute}:${parts.second}${sign}${hours}:${minutes}`;
}
