// Writes a long conversation straight into the database file before the server starts.
import { openDatabase } from '../src/store/database.ts';
import type { NewMessage } from '../src/store/message.ts';
import { appendMessages } from '../src/store/messages-repository.ts';
import { createSession } from '../src/store/sessions-repository.ts';
import { seededRandom } from '../test/support/seeded-random.ts';

const words = (
  'the a server backup disk logs config update schedule meeting report invoice draft email calendar ' +
  'reminder network router camera thermostat light kitchen bedroom temperature humidity weekly monthly ' +
  'please check whether could you also after before because tomorrow morning evening project budget ' +
  'notes summary question answer document folder file permission service restart status error warning ' +
  'install version package release plan step first then finally result looks fine should would will'
).split(' ');

export function prose(random: () => number, length: number): string {
  let text = '';
  let sentenceStart = true;
  while (text.length < length) {
    let word = words[Math.floor(random() * words.length)] as string;
    if (sentenceStart) word = word[0]!.toUpperCase() + word.slice(1);
    sentenceStart = random() < 0.1;
    text += word + (sentenceStart ? '. ' : ' ');
  }
  return text.slice(0, length).trimEnd() + '.';
}

/** `pairCount` user/assistant pairs of 200–600 characters each. */
export function conversation(pairCount: number): NewMessage[] {
  const random = seededRandom(2_000);
  const messages: NewMessage[] = [];
  for (let pair = 0; pair < pairCount; pair++) {
    messages.push({ role: 'user', content: prose(random, 200 + Math.floor(random() * 401)) });
    messages.push({ role: 'assistant', content: prose(random, 200 + Math.floor(random() * 401)) });
  }
  return messages;
}

/** Creates a session holding `pairCount` pairs in both buffers; returns its id and the characters stored. */
export async function seedLongSession(databaseFile: string, pairCount: number): Promise<{ sessionId: string; characters: number }> {
  const db = await openDatabase(databaseFile);
  try {
    const session = await createSession(db, { profileId: 'secretary' });
    const messages = conversation(pairCount);
    await appendMessages(db, session.id, messages);
    return { sessionId: session.id, characters: messages.reduce((total, message) => total + message.content.length, 0) };
  } finally {
    await db.destroy();
  }
}
