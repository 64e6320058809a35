import type { ScheduleTiming } from '../store/schedules-repository.ts';
import { checkAt, checkCron, isTimeZone, parseEvery, type Checked } from './schedule-times.ts';

/** A schedule's fields as the API and the tool send them. */
export interface ScheduleFields {
  name?: string;
  prompt?: string;
  cron?: string;
  every?: string | number;
  at?: string;
  timezone?: string;
  profile_id?: string;
  session_id?: string | null;
  enabled?: boolean;
}

/** Exactly one of cron, every and at, checked in the zone it will run in. */
export function checkTiming(fields: ScheduleFields, timezone: string, now: Date): Checked<ScheduleTiming> {
  const given = (['cron', 'every', 'at'] as const).filter((field) => fields[field] !== undefined);
  if (given.length !== 1) {
    const field = given.length === 0 ? 'cron' : given.join(', ');
    return { ok: false, field, message: `${given.length === 0 ? 'cron, every, at' : field}: exactly one of cron, every and at is needed, got ${given.length}` };
  }
  if (fields.cron !== undefined) {
    const checked = checkCron(fields.cron, timezone);
    return checked.ok ? { ok: true, value: { cron: checked.value } } : checked;
  }
  if (fields.every !== undefined) {
    const checked = parseEvery(fields.every);
    return checked.ok ? { ok: true, value: { everyMs: checked.value } } : checked;
  }
  const checked = checkAt(fields.at!, now);
  return checked.ok ? { ok: true, value: { at: checked.value } } : checked;
}

/** When a new schedule runs: its zone (the default when none is given) and exactly one timing, checked in that zone. */
export function checkWhen(fields: ScheduleFields, defaultTimezone: string, now: Date): Checked<{ timing: ScheduleTiming; timezone: string }> {
  const timezone = checkTimeZone(fields.timezone ?? defaultTimezone);
  if (!timezone.ok) return timezone;
  const timing = checkTiming(fields, timezone.value, now);
  if (!timing.ok) return timing;
  return { ok: true, value: { timing: timing.value, timezone: timezone.value } };
}

export function checkTimeZone(timezone: string): Checked<string> {
  return isTimeZone(timezone) ? { ok: true, value: timezone } : { ok: false, field: 'timezone', message: `timezone: ${JSON.stringify(timezone)} is not an IANA time zone` };
}

export function checkText(fields: ScheduleFields, field: 'name' | 'prompt'): Checked<string> {
  const value = fields[field]?.trim();
  return value ? { ok: true, value } : { ok: false, field, message: `${field}: must not be empty` };
}
