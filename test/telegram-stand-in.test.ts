import { Bot, GrammyError, HttpError, InlineKeyboard, InputFile } from 'grammy';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startTelegramBotApi, type TelegramBotApi } from './support/telegram-bot-api.ts';
import { waitUntil } from './support/wait-until.ts';

// The stand-in is checked against the real client the channel uses: grammY, unchanged.

const person = 111_222_333;
let api: TelegramBotApi;
const bots: Bot[] = [];

function botFor(token = api.token): Bot {
  const bot = new Bot(token, { client: { apiRoot: api.apiRoot } });
  bots.push(bot);
  return bot;
}

async function failureOf(promise: Promise<unknown>): Promise<GrammyError> {
  const error = await promise.then(() => undefined, (caught: unknown) => caught);
  expect(error).toBeInstanceOf(GrammyError);
  return error as GrammyError;
}

beforeEach(async () => {
  api = await startTelegramBotApi();
});

afterEach(async () => {
  await Promise.all(bots.splice(0).map((bot) => (bot.isRunning() ? bot.stop() : undefined)));
  await api.close();
});

describe('Telegram Bot API stand-in', () => {
  it('answers getMe and refuses a wrong token with 401', async () => {
    const bot = botFor();
    expect(await bot.api.getMe()).toMatchObject({ id: api.bot.id, is_bot: true, username: 'hearth_test_bot' });
    const error = await failureOf(botFor(`${api.bot.id}:wrong`).api.getMe());
    expect(error.error_code).toBe(401);
    expect(error.description).toBe('Unauthorized');
  });

  it('delivers updates to bot.start by long polling, holding the request until one is queued', async () => {
    const bot = botFor();
    const received: string[] = [];
    bot.on('message:text', async (context) => {
      received.push(context.message.text);
      await context.reply(`echo: ${context.message.text}`);
    });
    void bot.start({ timeout: 20 });
    await waitUntil(() => api.callsOf('getUpdates').length > 0);
    expect(api.callsOf('deleteWebhook')).toHaveLength(1);
    const queuedAt = Date.now();
    api.sendText(person, 'hello');
    await waitUntil(() => api.botMessages(person).length === 1);
    // The first request was held until the update came, not answered empty at once.
    const [first] = api.callsOf('getUpdates');
    expect(first!.answeredAt).toBeGreaterThanOrEqual(queuedAt);
    expect(received).toEqual(['hello']);
    expect(api.botMessages(person)[0]!.text).toBe('echo: hello');
    // The next poll confirms the update by its offset; it is not delivered twice.
    api.sendText(person, 'again');
    await waitUntil(() => api.botMessages(person).length === 2);
    expect(received).toEqual(['hello', 'again']);
    expect(api.pendingUpdates().map((update) => update.message)).not.toContainEqual(expect.objectContaining({ text: 'hello' }));
  });

  it('answers a held getUpdates with nothing once its timeout passes', async () => {
    const started = Date.now();
    expect(await botFor().api.getUpdates({ timeout: 1 })).toEqual([]);
    expect(Date.now() - started).toBeGreaterThanOrEqual(950);
  });

  it('honours allowed_updates', async () => {
    api.sendText(person, 'a message');
    api.pressButton(person, (await botFor().api.sendMessage(person, 'x')).message_id, 'data');
    const updates = await botFor().api.getUpdates({ allowed_updates: ['callback_query'], timeout: 0 });
    expect(updates.map((update) => Object.keys(update).filter((key) => key !== 'update_id'))).toEqual([['callback_query']]);
  });

  it('gives commands their bot_command entity, which grammY routes by', async () => {
    const bot = botFor();
    const commands: string[] = [];
    bot.command('new', (context) => void commands.push(`new:${context.match}`));
    void bot.start({ timeout: 20 });
    api.sendText(person, '/new secretary');
    await waitUntil(() => commands.length === 1);
    expect(commands).toEqual(['new:secretary']);
  });

  it('sends HTML, validates it, and edits it, refusing an edit that changes nothing', async () => {
    const bot = botFor();
    api.addChat(person);
    const sent = await bot.api.sendMessage(person, '<b>bold</b> &amp; <code>x &lt; y</code>', { parse_mode: 'HTML' });
    expect(sent.text).toBe('bold & x < y');
    expect(sent.entities).toEqual([
      { type: 'bold', offset: 0, length: 4 },
      { type: 'code', offset: 7, length: 5 },
    ]);
    for (const broken of ['<b>open', 'close</b>', '<script>x</script>', 'a < b', '<pre><b>x</b></pre>']) {
      const error = await failureOf(bot.api.sendMessage(person, broken, { parse_mode: 'HTML' }));
      expect(error.error_code, broken).toBe(400);
      expect(error.description, broken).toMatch(/^Bad Request: can't parse entities/);
    }
    expect((await failureOf(bot.api.sendMessage(person, 'x'.repeat(4097)))).description).toBe('Bad Request: message is too long');
    await bot.api.sendMessage(person, `<b>${'x'.repeat(4096)}</b>`, { parse_mode: 'HTML' });
    const edited = await bot.api.editMessageText(person, sent.message_id, '<i>changed</i>', { parse_mode: 'HTML' });
    expect(edited).toMatchObject({ text: 'changed', entities: [{ type: 'italic', offset: 0, length: 7 }] });
    const unchanged = await failureOf(bot.api.editMessageText(person, sent.message_id, '<i>changed</i>', { parse_mode: 'HTML' }));
    expect(unchanged.description).toMatch(/^Bad Request: message is not modified/);
    expect(api.botMessages(person)[0]!.history).toEqual(['bold & x < y', 'changed']);
    expect((await failureOf(bot.api.editMessageText(person, 999, 'x'))).description).toBe('Bad Request: message to edit not found');
  });

  it('refuses to start a conversation with someone who never wrote', async () => {
    const error = await failureOf(botFor().api.sendMessage(987_654, 'hello'));
    expect(error.error_code).toBe(403);
  });

  it('delivers button presses; the callback is answered once; callback data is at most 64 bytes', async () => {
    const bot = botFor();
    api.addChat(person);
    const keyboard = new InlineKeyboard().text('Allow once', 'a:1').text('Deny', 'd:1');
    const approval = await bot.api.sendMessage(person, 'Run <code>ls</code>?', { parse_mode: 'HTML', reply_markup: keyboard });
    const tooLong = await failureOf(bot.api.sendMessage(person, 'x', { reply_markup: new InlineKeyboard().text('x', 'y'.repeat(65)) }));
    expect(tooLong.description).toBe('Bad Request: BUTTON_DATA_INVALID');
    const pressed: string[] = [];
    bot.on('callback_query:data', async (context) => {
      pressed.push(context.callbackQuery.data);
      await context.answerCallbackQuery({ text: 'Allowed' });
      await context.editMessageText('Allowed once', { reply_markup: undefined });
    });
    void bot.start({ timeout: 20 });
    const update = api.pressButton(person, approval.message_id, 'a:1');
    await waitUntil(() => api.botMessages(person)[0]!.text === 'Allowed once');
    expect(pressed).toEqual(['a:1']);
    const queryId = (update.callback_query as { id: string }).id;
    expect(api.callbackAnswers.get(queryId)).toMatchObject({ text: 'Allowed' });
    expect(api.botMessages(person)[0]!.replyMarkup).toBeUndefined();
    const again = await failureOf(bot.api.answerCallbackQuery(queryId));
    expect(again.description).toMatch(/query is too old/);
  });

  it('answers 429 with retry_after on the calls it is told to, and grammY sees it', async () => {
    const bot = botFor();
    api.addChat(person);
    const sent = await bot.api.sendMessage(person, 'one');
    api.rateLimitNext('editMessageText', 2, 3);
    for (let attempt = 0; attempt < 2; attempt += 1) {
      const error = await failureOf(bot.api.editMessageText(person, sent.message_id, 'two'));
      expect(error.error_code).toBe(429);
      expect(error.parameters.retry_after).toBe(3);
      expect(error.description).toBe('Too Many Requests: retry after 3');
    }
    await bot.api.editMessageText(person, sent.message_id, 'two');
    expect(api.callsOf('editMessageText').map((call) => call.errorCode)).toEqual([429, 429, undefined]);
  });

  it('bot.start waits out a 429 on getUpdates for retry_after seconds', async () => {
    const bot = botFor();
    api.rateLimitNext('getUpdates', 1, 1);
    const received: string[] = [];
    bot.on('message:text', (context) => void received.push(context.message.text));
    api.sendText(person, 'after the wait');
    void bot.start({ timeout: 20 });
    await waitUntil(() => received.length === 1);
    const [refused, retried] = api.callsOf('getUpdates');
    expect(refused!.errorCode).toBe(429);
    expect(retried!.at - refused!.at).toBeGreaterThanOrEqual(950);
  });

  it('registers commands, sends chat actions, serves photos, documents and voice notes through getFile', async () => {
    const bot = botFor();
    await bot.api.setMyCommands([
      { command: 'new', description: 'Start a new session' },
      { command: 'stop', description: 'Stop the running answer' },
    ]);
    expect(api.commands.map((entry) => entry.command)).toEqual(['new', 'stop']);
    expect((await failureOf(bot.api.setMyCommands([{ command: 'Bad Command', description: 'x' }]))).description).toBe('Bad Request: BOT_COMMAND_INVALID');

    const photoBytes = Buffer.from('\xff\xd8\xff\xe0 a jpeg of sorts', 'latin1');
    const documentBytes = Buffer.from('%PDF-1.7 a document');
    const voiceBytes = Buffer.from('OggS voice');
    const media: Array<Record<string, unknown>> = [];
    bot.on('message', (context) => void media.push(context.message as unknown as Record<string, unknown>));
    void bot.start({ timeout: 20 });
    api.sendPhoto(person, { bytes: photoBytes, caption: 'look' });
    api.sendDocument(person, { bytes: documentBytes, fileName: 'report.pdf', mimeType: 'application/pdf' });
    api.sendVoice(person, { bytes: voiceBytes, duration: 2 });
    await waitUntil(() => media.length === 3);
    await bot.api.sendChatAction(person, 'typing');
    expect(api.callsOf('sendChatAction')[0]!.body).toMatchObject({ chat_id: person, action: 'typing' });

    const download = async (fileId: string) => {
      const file = await bot.api.getFile(fileId);
      const response = await fetch(`${api.apiRoot}/file/bot${api.token}/${file.file_path}`);
      expect(response.status).toBe(200);
      return Buffer.from(await response.arrayBuffer());
    };
    const photo = media[0]!.photo as Array<{ file_id: string; width: number }>;
    expect(media[0]!.caption).toBe('look');
    expect(await download(photo.at(-1)!.file_id)).toEqual(photoBytes);
    const document = media[1]!.document as { file_id: string; file_name: string; mime_type: string };
    expect(document).toMatchObject({ file_name: 'report.pdf', mime_type: 'application/pdf' });
    expect(await download(document.file_id)).toEqual(documentBytes);
    expect(await download((media[2]!.voice as { file_id: string }).file_id)).toEqual(voiceBytes);
    expect((await failureOf(bot.api.getFile('nope'))).description).toBe('Bad Request: invalid file_id');
    const file = await bot.api.getFile(document.file_id);
    expect((await fetch(`${api.apiRoot}/file/botwrong/${file.file_path}`)).status).toBe(404);
  });

  it('fails calls as an outage while down, and answers again after', async () => {
    const bot = botFor();
    api.setDown(true);
    const error = await bot.api.getMe().then(() => undefined, (caught: unknown) => caught);
    expect(error).toBeInstanceOf(HttpError);
    expect(String((error as HttpError).message)).not.toContain(api.token);
    api.setDown(false);
    expect((await bot.api.getMe()).id).toBe(api.bot.id);
    api.failNext('getMe', 1, { errorCode: 502, description: 'Bad Gateway' });
    expect((await failureOf(bot.api.getMe())).error_code).toBe(502);
  });

  it('takes a voice note uploaded with sendVoice (multipart, attach://) in reply to a message, and serves it back by its file id', async () => {
    const bot = botFor();
    const note = api.sendVoice(person, { bytes: Buffer.from('OggS question') });
    const noteId = (note.message as { message_id: number }).message_id;
    // An Ogg page with an Opus head, as ffmpeg writes one, and its body.
    const opus = Buffer.concat([Buffer.from('OggS\0\x02', 'latin1'), Buffer.alloc(22), Buffer.from('\x01\x13OpusHead\x01\x01', 'latin1'), Buffer.alloc(64, 7)]);
    const sent = await bot.api.sendVoice(person, new InputFile(opus, 'answer.ogg'), { duration: 3, caption: '<b>The answer</b>', parse_mode: 'HTML', reply_parameters: { message_id: noteId } });
    expect(sent).toMatchObject({ voice: { duration: 3, mime_type: 'audio/ogg', file_size: opus.length }, caption: 'The answer', reply_to_message: { message_id: noteId } });
    expect(api.callsOf('sendVoice')[0]!.body.voice).toMatch(/^attach:\/\//);
    expect(api.botMessages(person)[0]).toMatchObject({ text: 'The answer', replyTo: noteId, voice: { bytes: opus, duration: 3 } });
    const file = await bot.api.getFile(sent.voice.file_id);
    expect(Buffer.from(await (await fetch(`${api.apiRoot}/file/bot${api.token}/${file.file_path}`)).arrayBuffer())).toEqual(opus);
    // Sent again by its file id, without an upload.
    expect((await bot.api.sendVoice(person, sent.voice.file_id)).voice!.file_id).toBe(sent.voice.file_id);

    // What Telegram does not play as a voice note arrives as a document.
    const wav = await bot.api.sendVoice(person, new InputFile(Buffer.from('RIFF....WAVEfmt '), 'answer.wav'));
    expect(wav.voice).toBeUndefined();
    expect(api.botMessages(person).at(-1)!.document!.bytes.toString()).toBe('RIFF....WAVEfmt ');
    expect((await failureOf(bot.api.sendVoice(person, new InputFile(opus), { reply_parameters: { message_id: 9_999 } }))).description).toBe('Bad Request: message to be replied not found');
    const without = await bot.api.sendMessage(person, 'anyway', { reply_parameters: { message_id: 9_999, allow_sending_without_reply: true } });
    expect(without.reply_to_message).toBeUndefined();
    expect((await failureOf(bot.api.sendVoice(person, 'no-such-file'))).description).toBe('Bad Request: wrong file identifier/HTTP URL specified');
    expect((await failureOf(bot.api.sendVoice(person, new InputFile(opus), { caption: 'x'.repeat(1_025) }))).description).toBe('Bad Request: message caption is too long');
  });

  it('deletes messages', async () => {
    const bot = botFor();
    api.addChat(person);
    const sent = await bot.api.sendMessage(person, 'soon gone');
    await bot.api.deleteMessage(person, sent.message_id);
    expect(api.botMessages(person)).toEqual([]);
    expect((await failureOf(bot.api.deleteMessage(person, sent.message_id))).description).toBe('Bad Request: message to delete not found');
  });
});
