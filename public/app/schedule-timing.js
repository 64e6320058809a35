import { element } from './dom.js';

/*
 * When a schedule runs, both ways: the form's choice as the timing field `POST /schedules` takes,
 * and a schedule's timing, next runs and cron (the crons the form makes) in words.
 */

const minuteMs = 60_000;

/** Cron's day numbers, the week starting on Monday. */
export const weekdays = [
  ['1', 'Monday'],
  ['2', 'Tuesday'],
  ['3', 'Wednesday'],
  ['4', 'Thursday'],
  ['5', 'Friday'],
  ['6', 'Saturday'],
  ['0', 'Sunday'],
];

/** "09:30" and cron day fields → a cron expression. */
function cronAt(time, days) {
  const [hours, minutes] = (time || '').split(':').map(Number);
  if (!Number.isInteger(hours) || !Number.isInteger(minutes)) return '';
  return `${minutes} ${hours} * * ${days}`;
}

/** A `datetime-local` value ("2026-11-24T09:00", this browser's time) as ISO 8601 with this browser's offset. */
export function localIsoWithOffset(value) {
  const date = new Date(value);
  if (!value || Number.isNaN(date.getTime())) return '';
  const pad = (number) => String(Math.abs(number)).padStart(2, '0');
  const offset = -date.getTimezoneOffset();
  const sign = offset >= 0 ? '+' : '-';
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}T${pad(date.getHours())}:${pad(date.getMinutes())}:00${sign}${pad(Math.trunc(offset / 60))}:${pad(offset % 60)}`;
}

/** The form's choice as the one timing field `POST /schedules` takes (`cron`, `every` or `at`); undefined while incomplete. */
export function timingOf(kind, fields) {
  switch (kind) {
    case 'daily':
      return fields.time ? { cron: cronAt(fields.time, '*') } : undefined;
    case 'weekdays':
      return fields.time ? { cron: cronAt(fields.time, '1-5') } : undefined;
    case 'weekly':
      return fields.time && fields.day !== undefined ? { cron: cronAt(fields.time, fields.day) } : undefined;
    case 'every':
      return (fields.amount ?? '').trim() ? { every: `${fields.amount.trim()}${fields.unit ?? 'm'}` } : undefined;
    case 'at':
      return fields.at ? { at: localIsoWithOffset(fields.at) } : undefined;
    default:
      return (fields.cron ?? '').trim() ? { cron: fields.cron.trim() } : undefined;
  }
}

/** A duration in words: `every_ms` of 5400000 is "1 h 30 min". */
function describeDuration(milliseconds) {
  const minutes = Math.round(milliseconds / minuteMs);
  const days = Math.floor(minutes / 1440);
  const hours = Math.floor((minutes % 1440) / 60);
  const rest = minutes % 60;
  return [days && `${days} d`, hours && `${hours} h`, rest && `${rest} min`].filter(Boolean).join(' ') || `${milliseconds} ms`;
}

/** An instant as the schedule's zone sees it: "Tue, 24 Nov, 09:00". */
export function formatInZone(iso, timezone) {
  if (!iso) return '';
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return iso;
  const options = { weekday: 'short', day: 'numeric', month: 'short', hour: '2-digit', minute: '2-digit' };
  try {
    return date.toLocaleString(undefined, { ...options, timeZone: timezone });
  } catch {
    return date.toLocaleString(undefined, options);
  }
}

/** The crons the form makes, in words ("every day at 09:00"); undefined for any other. */
export function describeCron(cron) {
  const found = /^(\d{1,2}) (\d{1,2}) \* \* (\*|1-5|[0-6])$/.exec(cron);
  if (!found) return undefined;
  const time = `${found[2].padStart(2, '0')}:${found[1].padStart(2, '0')}`;
  if (found[3] === '*') return `every day at ${time}`;
  if (found[3] === '1-5') return `weekdays at ${time}`;
  return `every ${weekdays.find(([value]) => value === found[3])[1]} at ${time}`;
}

/** When a schedule runs, in words, with its zone. */
export function describeTiming(schedule) {
  const words = schedule.cron && describeCron(schedule.cron);
  if (words) return [words, ' (', element('code', {}, schedule.cron), `) · ${schedule.timezone}`];
  if (schedule.cron) return [element('code', {}, schedule.cron), ` · ${schedule.timezone}`];
  if (schedule.every_ms) return `every ${describeDuration(schedule.every_ms)}`;
  if (schedule.at) return `once, ${formatInZone(schedule.at, schedule.timezone)} ${schedule.timezone}`;
  return '';
}
