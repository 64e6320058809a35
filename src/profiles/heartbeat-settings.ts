/** A profile's heartbeat (docs/agent.md, "Heartbeat"): how often it looks things over, and during which hours. */
export interface HeartbeatSettings {
  /** As written: `30m`, `2h`, `1d`. */
  every: string;
  everyMs: number;
  /** Minutes after midnight, in the scheduler's time zone; `end` before `start` spans midnight. */
  activeHours?: { start: number; end: number };
}

export interface HeartbeatFrontMatter {
  every: string;
  active_hours?: string;
}

const unitMs = { m: 60_000, h: 3_600_000, d: 86_400_000 } as const;
const durationPattern = /^([1-9][0-9]{0,5})([mhd])$/;
const activeHoursPattern = /^([01][0-9]|2[0-3]):([0-5][0-9])-([01][0-9]|2[0-4]):([0-5][0-9])$/;

/** The settings, or a message naming the field that is wrong. */
export function parseHeartbeat(frontMatter: HeartbeatFrontMatter): HeartbeatSettings | string {
  const duration = durationPattern.exec(frontMatter.every);
  if (!duration) return `heartbeat.every ${JSON.stringify(frontMatter.every)} must be a duration like 30m, 2h or 1d (at least 1m)`;
  const everyMs = Number(duration[1]) * unitMs[duration[2] as keyof typeof unitMs];
  if (frontMatter.active_hours === undefined) return { every: frontMatter.every, everyMs };

  const hours = activeHoursPattern.exec(frontMatter.active_hours);
  const invalidHours = `heartbeat.active_hours ${JSON.stringify(frontMatter.active_hours)} must be two times like 08:00-22:00`;
  if (!hours) return invalidHours;
  const start = Number(hours[1]) * 60 + Number(hours[2]);
  const end = Number(hours[3]) * 60 + Number(hours[4]);
  if (end > 24 * 60) return invalidHours;
  if (start === end) return `heartbeat.active_hours ${JSON.stringify(frontMatter.active_hours)} starts and ends at the same time`;
  return { every: frontMatter.every, everyMs, activeHours: { start, end } };
}

/** The active hours as written in the front matter, `08:00-22:00`; undefined when there are none. */
export function describeActiveHours(settings: HeartbeatSettings): string | undefined {
  if (!settings.activeHours) return undefined;
  const clock = (minutes: number) => `${String(Math.floor(minutes / 60)).padStart(2, '0')}:${String(minutes % 60).padStart(2, '0')}`;
  return `${clock(settings.activeHours.start)}-${clock(settings.activeHours.end)}`;
}

/** Whether `now`, read in `timeZone`, falls within the active hours (always, when there are none). */
export function isWithinActiveHours(settings: HeartbeatSettings, now: Date, timeZone: string): boolean {
  if (!settings.activeHours) return true;
  const parts = new Intl.DateTimeFormat('en-GB', { timeZone, hour: '2-digit', minute: '2-digit', hourCycle: 'h23' }).formatToParts(now);
  const part = (type: string) => Number(parts.find((candidate) => candidate.type === type)?.value ?? 0);
  const minute = part('hour') * 60 + part('minute');
  const { start, end } = settings.activeHours;
  return start < end ? minute >= start && minute < end : minute >= start || minute < end;
}
