import type { Person } from '../../people/person.ts';
import { keepsMemory } from '../../people/rights.ts';
import type { ToolContext } from '../tool.ts';
import type { ToolSessions } from '../tool-sessions.ts';

/** Whose long-term memory a call reads and writes, or why it may touch none. */
export type MemoryOwner = { ok: true; personId: string } | { ok: false; message: string };

/** Finds the memory owner of a call: the person whose session it runs in (a sub-agent's: its parent's). */
export type MemoryOwnerOf = (context: ToolContext) => Promise<MemoryOwner>;

export const sharedSessionsKeepNoMemory =
  "A session shared with the household keeps no long-term memory: others write in it, so its person's facts are neither shown nor changed here.";

export const guestsKeepNoMemory = "Guests keep no long-term memory: nothing is remembered, searched or forgotten in a guest's session.";

export function memoryOwnerOf(deps: {
  sessions: () => ToolSessions | undefined;
  person: (personId: string) => Promise<Person | undefined>;
}): MemoryOwnerOf {
  return async (context) => {
    const sessionId = context.parentSessionId ?? context.sessionId;
    const session = await deps.sessions()?.find(sessionId);
    if (!session) return { ok: false, message: `The session ${sessionId} is gone, and with it whose memory this was.` };
    if (session.shared) return { ok: false, message: sharedSessionsKeepNoMemory };
    const person = await deps.person(session.personId);
    if (!person) return { ok: false, message: 'The person this session belonged to has left the household; their memory went with them.' };
    if (!keepsMemory(person)) return { ok: false, message: guestsKeepNoMemory };
    return { ok: true, personId: person.id };
  };
}
