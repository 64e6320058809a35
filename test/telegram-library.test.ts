import { readFile } from 'node:fs/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { documentFolder, type DocumentFolder } from './support/document-files.ts';
import { useHearth } from './support/hearth-server.ts';
import { startTelegramBotApi, type TelegramBotApi } from './support/telegram-bot-api.ts';
import { telegramChannelFor } from './support/telegram-test-channel.ts';
import { waitUntil } from './support/wait-until.ts';

// Telegram's "add to library" through the real app, library and indexer, against the Bot API stand-in: a document
// sent without words is offered, a press adds it through getFile, and the chat is told once it is ready.

const ada = 7_300_001;
let api: TelegramBotApi | undefined;
let files: DocumentFolder | undefined;

afterEach(async () => {
  await api?.close();
  await files?.remove();
  api = files = undefined;
});
// Registered after the hook above, so the app is closed before the stand-in it polls.
const startApp = useHearth();

describe('Telegram: add to library', () => {
  it('a PDF sent without words → Mine / Household / No → Household pressed → added and indexed → "ready" said in the chat', async () => {
    api = await startTelegramBotApi();
    files = await documentFolder();
    const channel = telegramChannelFor(api, ada);
    const hearth = await startApp({ channels: [channel] });
    await waitUntil(() => channel.status.state === 'connected');
    const pdf = await files.pdf('dishwasher.pdf', [
      [{ heading: 'Installing', paragraphs: ['Level the dishwasher with its feet.'] }],
      [{ heading: 'Salt', paragraphs: ['Fill the softener with dishwasher salt when the salt light comes on.'] }],
    ]);

    api.sendDocument(ada, { bytes: await readFile(pdf.path), fileName: 'dishwasher.pdf', mimeType: 'application/pdf' }, { firstName: 'Ada' });
    const question = await waitUntil(() => api!.botMessages(ada).find((message) => message.replyMarkup?.inline_keyboard));
    expect(question.text).toBe('Add dishwasher.pdf to your library? Hearth can then search it and cite it in answers.');
    expect(question.replyMarkup!.inline_keyboard!.flat().map((button) => button.text)).toEqual(['Mine', 'Household', 'No']);

    const household = question.replyMarkup!.inline_keyboard!.flat().find((button) => button.text === 'Household')!;
    api.pressButton(ada, question.message_id, household.callback_data!, { firstName: 'Ada' });
    const said = await waitUntil(() => api!.botMessages(ada).find((message) => message.text.includes('is ready')));
    expect(said.text).toMatch(/^dishwasher\.pdf is ready in the household library \(\d+ passages?\): ask about it any time\.$/);
    expect(api.botMessages(ada).find((message) => message.message_id === question.message_id)!.text).toBe('Adding dishwasher.pdf to the household library…');

    const { body } = await hearth.request('GET', '/documents');
    expect(body.documents).toEqual([expect.objectContaining({ name: 'dishwasher.pdf', library: 'household', source: 'telegram', status: 'ready', pages: 2 })]);
    const { body: found } = await hearth.request('GET', `/documents/search?q=${encodeURIComponent('when do I add salt')}`);
    expect(found.results[0]).toMatchObject({ name: 'dishwasher.pdf', page: 2 });
    // Nothing was sent to the chat's session: the document went to the library only.
    expect(hearth.llm.requests).toHaveLength(0);
  });
});
