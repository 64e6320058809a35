import { isoInZone } from './schedule-times.ts';

const localPattern = /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2})(?::(\d{2}))?$/;

/**
 * A wall-clock time without an offset ("2026-11-24 09:00") read in `timezone`, as ISO 8601 with
 * that zone's offset then; a time that already carries an offset, or is no local time, is returned as it is.
 */
export function withZoneOffset(at: string, timezone: string): string {
  const match = localPattern.exec(at.trim());
  if (!match) return at;
  const [year, month, day, hour, minute, second] = match.slice(1).map((part) => Number(part ?? 0)) as [number, number, number, number, number, number];
  const wallClock = Date.UTC(year, month - 1, day, hour, minute, second);
  // The zone's offset at a first guess, then at the corrected instant: right on both sides of a DST change.
  let instant = wallClock;
  for (let pass = 0; pass < 2; pass += 1) instant = wallClock - offsetMs(new Date(instant), timezone);
  return isoInZone(new Date(instant), timezone);
}

function offsetMs(instant: Date, timezone: string): number {
  const offset = /([+-])(\d{2}):(\d{2})$/.exec(isoInZone(instant, timezone))!;
  return (offset[1] === '-' ? -1 : 1) * (Number(offset[2]) * 60 + Number(offset[3])) * 60_000;
}

/** "Tue 24 Nov 2026 09:00 Europe/Berlin": the instant as a person in that zone reads it. */
export function describeInstant(instant: Date, timezone: string): string {
  const parts = Object.fromEntries(
    new Intl.DateTimeFormat('en-GB', { timeZone: timezone, weekday: 'short', day: 'numeric', month: 'short', year: 'numeric', hour: '2-digit', minute: '2-digit', hourCycle: 'h23' })
      .formatToParts(instant)
      .map((part) => [part.type, part.value]),
  );
  return `${parts.weekday} ${parts.day} ${parts.month} ${parts.year} ${parts.hour}:${parts.minute} ${timezone}`;
}
