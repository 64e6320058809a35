import type { Profile } from '../profiles/profile.ts';

/** What a heartbeat answer starts with when nothing needs the person (docs/agent.md, "Heartbeat"). */
export const heartbeatOk = 'HEARTBEAT_OK';

export type HeartbeatVerdict = { type: 'quiet' } | { type: 'finding'; title: string; body: string };

const defaultChecklist = 'Look over what you can see with your tools and say whether anything needs the person now.';
const maxTitleLength = 120;

/** The message a heartbeat run sends: the profile's checklist and how to answer when all is well. */
export function heartbeatPrompt(profile: Profile): string {
  return [
    'Heartbeat: nobody asked you anything; this is a routine check.',
    profile.heartbeat_checklist ?? defaultChecklist,
    `If nothing needs the person's attention, answer with ${heartbeatOk} alone. Otherwise answer with one line saying what needs attention, then the details.`,
  ].join('\n\n');
}

/** An answer starting with HEARTBEAT_OK is quiet; anything else is a finding titled by its first line. */
export function judgeHeartbeatAnswer(answer: string): HeartbeatVerdict {
  const text = answer.trim();
  if (text.startsWith(heartbeatOk)) return { type: 'quiet' };
  const newline = text.indexOf('\n');
  const firstLine = (newline === -1 ? text : text.slice(0, newline)).trim();
  const body = newline === -1 ? '' : text.slice(newline + 1).trim();
  if (firstLine === '') return { type: 'finding', title: 'The heartbeat answered nothing', body };
  if (firstLine.length <= maxTitleLength) return { type: 'finding', title: firstLine, body };
  return { type: 'finding', title: `${firstLine.slice(0, maxTitleLength - 1)}…`, body: text };
}
