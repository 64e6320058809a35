// A user tool: the current date and time, in the server's time zone or in one the caller names.
// See _template.ts for the shape every tool module has.

export const name = 'get_current_datetime';

export const description = "Current date and time, in the server's time zone or an IANA one.";

export const parameters = {
  type: 'object',
  properties: {
    time_zone: { type: 'string', description: "e.g. Europe/Paris; default: the server's" },
  },
  required: [],
  additionalProperties: false,
};

export async function execute(params: { time_zone?: string }) {
  const serverZone = Intl.DateTimeFormat().resolvedOptions().timeZone;
  const zone = params.time_zone?.trim() || serverZone;
  let readable: Intl.DateTimeFormat;
  try {
    readable = new Intl.DateTimeFormat('en-GB', { timeZone: zone, dateStyle: 'full', timeStyle: 'long' });
  } catch {
    return {
      output: `"${zone}" is not a time zone I know. Use an IANA name such as Europe/Berlin, America/New_York, Asia/Tokyo or UTC.`,
      success: false,
    };
  }
  const now = new Date();
  const { iso, offset } = isoInZone(now, zone);
  return [
    readable.format(now),
    `ISO 8601: ${iso}`,
    `Time zone: ${zone} (UTC${offset})${zone === serverZone ? ", the server's time zone" : ''}`,
    `Unix time: ${Math.floor(now.getTime() / 1000)}`,
  ].join('\n');
}

/** The local time in `zone` as ISO 8601 with its UTC offset, e.g. 2025-03-01T14:05:09+01:00. */
function isoInZone(date: Date, zone: string): { iso: string; offset: string } {
  const parts = new Intl.DateTimeFormat('en-US', {
    timeZone: zone,
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
    second: '2-digit',
    hourCycle: 'h23',
    timeZoneName: 'longOffset',
  }).formatToParts(date);
  const part = (type: Intl.DateTimeFormatPartTypes) => parts.find((entry) => entry.type === type)?.value ?? '';
  // "GMT+05:30", or plain "GMT" for UTC itself.
  const offset = part('timeZoneName').replace('GMT', '') || '+00:00';
  const iso = `${part('year')}-${part('month')}-${part('day')}T${part('hour')}:${part('minute')}:${part('second')}${offset}`;
  return { iso, offset };
}
