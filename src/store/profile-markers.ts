import type { Db } from './database.ts';
import type { Message } from './message.ts';
import { appendMessage, countMessages } from './messages-repository.ts';

export interface ProfileSwitch {
  profile_id: string;
  profile_name: string;
  by: 'user' | 'agent';
}

/**
 * Marks a profile switch in the display history, so the conversation shows where it happened
 * after a reload; the context never gets it. A session with no message yet gets no marker.
 */
export async function appendProfileMarker(db: Db, sessionId: string, change: ProfileSwitch): Promise<Message | undefined> {
  if ((await countMessages(db, sessionId, 'display')) === 0) return undefined;
  const [marker] = await appendMessage(db, sessionId, { role: 'system', content: `Switched to the ${change.profile_name} profile.`, profile_switch: change }, ['display']);
  return marker;
}
