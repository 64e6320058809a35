// Telegram's "add to library" in memory: the offer's composer on a grammY bot whose Bot API calls are answered in the
// process, over the test double of the library. The whole way through the app and the Bot API stand-in is
// test/telegram-library.test.ts.
import { afterEach, describe, expect, it } from 'vitest';
import { unknownButtons } from '../../src/channels/telegram/button-press.ts';
import { chatPeople } from '../../src/channels/telegram/chat-people.ts';
import { LibraryOffers } from '../../src/channels/telegram/library-offers.ts';
import { InMemoryBot } from '../support/in-memory-bot.ts';
import { InMemoryDocuments } from '../support/in-memory-documents.ts';
import { PlayedPeople, playedPerson } from '../support/played-people.ts';
import { recordingLogger } from '../support/recording-logger.ts';
import { waitUntil } from '../support/wait-until.ts';

const ada = 5_200_001;
const bob = 5_200_002;
const manual = { file_id: 'manual-1', file_unique_id: 'u1', file_name: 'hood manual.md', mime_type: 'text/markdown' };

let libraries: InMemoryDocuments[] = [];
afterEach(() => {
  for (const library of libraries) library.close();
  libraries = [];
});

function offered({ holdIndexing = false } = {}) {
  const documents = new InMemoryDocuments(1024 * 1024, holdIndexing);
  libraries.push(documents);
  const people = new PlayedPeople();
  const { logger, lines } = recordingLogger();
  const bot = new InMemoryBot();
  const downloads: string[] = [];
  const offers = new LibraryOffers({
    api: bot.bot.api,
    documents,
    download: async (fileId) => {
      downloads.push(fileId);
      return Buffer.from('The hood takes filter F-22.\n\nClean it monthly.');
    },
    downloadFailed: (error) => (error as Error).message,
    logger,
  });
  const passedOn: string[] = [];
  bot.bot.use(chatPeople(people), offers.composer(), unknownButtons(logger), (context) => void passedOn.push(context.message?.document?.file_name ?? context.message?.text ?? ''));
  const question = () => bot.callsOf('sendMessage').filter((payload) => String(payload.text).startsWith('Add ')).at(-1)!;
  const edits = () => bot.callsOf('editMessageText').map((payload) => payload.text);
  return { bot, documents, people, offers, downloads, passedOn, question, edits, lines };
}

describe('Telegram: add to library', () => {
  it('asks about a document sent without words; Household adds it, and the chat is told once it is ready', async () => {
    const { bot, documents, downloads, passedOn, question, edits } = offered({ holdIndexing: true });
    await bot.handle(bot.message(ada, { document: manual }));
    expect(question().text).toBe('Add <b>hood manual.md</b> to your library? Hearth can then search it and cite it in answers.');
    expect(question().reply_markup).toEqual({ inline_keyboard: [[{ text: 'Mine', callback_data: 'lib:mine' }, { text: 'Household', callback_data: 'lib:household' }, { text: 'No', callback_data: 'lib:no' }]] });
    expect(passedOn).toEqual([]);
    expect(downloads).toEqual([]);

    await bot.handle(bot.press(ada, ada, bot.lastMessageId(ada), 'lib:household'));
    expect(downloads).toEqual(['manual-1']);
    expect(edits()).toEqual(['Adding <b>hood manual.md</b> to the household library…']);
    const [document] = documents.documents.values();
    expect(document).toMatchObject({ name: 'hood manual.md', library: 'household', source: 'telegram', media_type: 'text/markdown', status: 'indexing' });
    expect(bot.sentTo(ada)).toHaveLength(1);

    documents.finishIndexing(document!.id);
    await waitUntil(() => bot.sentTo(ada).length === 2);
    expect(bot.sentTo(ada).at(-1)).toBe('<b>hood manual.md</b> is ready in the household library (2 passages): ask about it any time.');
    documents.finishIndexing(document!.id);
    expect(bot.sentTo(ada)).toHaveLength(2);
  });

  it('says why a document could not be read', async () => {
    const { bot, documents } = offered({ holdIndexing: true });
    await bot.handle(bot.message(ada, { document: manual }));
    await bot.handle(bot.press(ada, ada, bot.lastMessageId(ada), 'lib:mine'));
    const [document] = documents.documents.values();
    expect(document).toMatchObject({ library: 'mine', owner_person_id: 'person-owner' });
    documents.failIndexing(document!.id, 'This PDF has no text layer (a scanned image).');
    await waitUntil(() => bot.sentTo(ada).length === 2);
    expect(bot.sentTo(ada).at(-1)).toBe('<b>hood manual.md</b> could not be read: This PDF has no text layer (a scanned image).');
  });

  it('No adds nothing; a caption, a kind the library does not read, or a guest pass the document on as before', async () => {
    const { bot, documents, people, downloads, passedOn, edits } = offered();
    await bot.handle(bot.message(ada, { document: manual }));
    await bot.handle(bot.press(ada, ada, bot.lastMessageId(ada), 'lib:no'));
    expect(edits()).toEqual(['<b>hood manual.md</b> was not added to the library.']);
    expect(downloads).toEqual([]);
    expect(documents.documents.size).toBe(0);

    await bot.handle(bot.message(ada, { document: manual, caption: 'what filter does it take?' }));
    await bot.handle(bot.message(ada, { document: { ...manual, file_name: 'photo.jpg', mime_type: 'image/jpeg' } }));
    const guest = people.joins(playedPerson('Gus', 'guest'));
    people.linkAccount(bob, guest);
    people.linkAccount(ada, people.owner);
    await bot.handle(bot.message(bob, { document: manual }));
    expect(passedOn).toEqual(['hood manual.md', 'photo.jpg', 'hood manual.md']);
  });

  it('offers a child their own library only; a press counts only on its question, in its chat, once', async () => {
    const { bot, documents, people, question, lines } = offered();
    const child = people.joins(playedPerson('Kim', 'child'));
    people.linkAccount(ada, child);
    people.linkAccount(bob, people.joins(playedPerson('Bob')));
    await bot.handle(bot.message(ada, { document: manual }));
    expect(question().reply_markup).toEqual({ inline_keyboard: [[{ text: 'Mine', callback_data: 'lib:mine' }, { text: 'No', callback_data: 'lib:no' }]] });
    const asked = bot.lastMessageId(ada);

    const forged = bot.press(bob, bob, asked, 'lib:household');
    await bot.handle(forged);
    const elsewhere = bot.press(ada, ada, asked + 1, 'lib:mine');
    await bot.handle(elsewhere);
    expect(bot.answerTo(forged)?.text).toBe('That question is no longer open: send the file again.');
    expect(bot.answerTo(elsewhere)?.text).toBe('That question is no longer open: send the file again.');
    expect(lines.filter((line) => line.includes('"refused":"library"'))).toHaveLength(2);
    expect(documents.documents.size).toBe(0);

    await bot.handle(bot.press(ada, ada, asked, 'lib:mine'));
    const again = bot.press(ada, ada, asked, 'lib:mine');
    await bot.handle(again);
    expect(bot.answerTo(again)?.text).toBe('That question is no longer open: send the file again.');
    expect([...documents.documents.values()].map((document) => [document.library, document.owner_person_id])).toEqual([['mine', child.id]]);
  });
});
