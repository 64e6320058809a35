import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { IntegrationStatus } from '../src/integrations/integration-registry.ts';
import type { SessionService } from '../src/sessions/session-service.ts';
import { TelegramChannel, type TelegramChannelOptions } from '../src/channels/telegram/telegram-channel.ts';
import { pressedWhereSent } from '../src/channels/telegram/button-press.ts';
import { PlayedPeople } from './support/played-people.ts';
import { PlayedSessions } from './support/played-telegram-sessions.ts';
import { PlayedSpeech } from './support/played-speech.ts';
import { startTelegramBotApi, type TelegramBotApi, type Update } from './support/telegram-bot-api.ts';
import { waitUntil } from './support/wait-until.ts';

// The channel against the Bot API stand-in, with sessions and the approval gate played by the test.

const ada = 4_242_001;
const bob = 4_242_002;
const stranger = 6_666_001;

let api: TelegramBotApi;
let sessions: PlayedSessions;
/** A household of one: every allowed chat acts as its owner, as before people. */
let people: PlayedPeople;
let logLines: string[];
let reported: Array<Omit<IntegrationStatus, 'name'>>;
const channels: TelegramChannel[] = [];

beforeEach(async () => {
  api = await startTelegramBotApi();
  sessions = new PlayedSessions();
  people = new PlayedPeople();
  logLines = [];
  reported = [];
});

afterEach(async () => {
  await Promise.all(channels.splice(0).map((channel) => channel.stop()));
  await api.close();
});

function startChannel(overrides: Partial<TelegramChannelOptions> = {}): TelegramChannel {
  const logStream = new Writable({
    write(chunk, _encoding, done) {
      logLines.push(chunk.toString());
      done();
    },
  });
  const channel = new TelegramChannel({
    token: api.token,
    allowedUsers: String(ada),
    apiRoot: api.apiRoot,
    sessionsFor: () => sessions,
    editIntervalMs: 30,
    pollTimeoutSeconds: 5,
    firstRetryMs: 50,
    longestRetryMs: 200,
    ...overrides,
  });
  channels.push(channel);
  channel.start({
    sessions: {} as SessionService,
    people,
    reportStatus: (status) => void reported.push(status),
    logger: pino({ level: 'info' }, logStream),
    speech: new PlayedSpeech(),
  });
  return channel;
}

describe('TelegramChannel', () => {
  it('connects by long polling after deleteWebhook, with its commands registered', async () => {
    const channel = startChannel();
    await waitUntil(() => channel.status.state === 'connected');
    expect(channel.status.bot).toBe('@hearth_test_bot');
    expect(reported.at(-1)).toEqual({ status: 'connected', details: { bot: '@hearth_test_bot' } });
    expect(api.callsOf('deleteWebhook')).toHaveLength(1);
    expect(api.commands.map((command) => command.command)).toEqual(['new', 'stop', 'profile', 'sessions', 'help']);
  });

  it('turns a bad token into a failed status with the reason and a retry, never the token', async () => {
    const wrong = `${api.bot.id}:${'w'.repeat(35)}`;
    const channel = startChannel({ token: wrong });
    await waitUntil(() => channel.status.state === 'failed');
    expect(channel.status.reason).toMatch(/401 Unauthorized.*TELEGRAM_BOT_TOKEN/);
    expect(channel.status.retryAt).toBeDefined();
    await waitUntil(() => api.callsOf('getMe').length >= 3);
    expect(JSON.stringify(channel.status)).not.toContain(wrong);
    expect(reported.at(-1)).toMatchObject({ status: expect.stringMatching(/failed|connecting/), message: expect.stringMatching(/401/) });
    expect(JSON.stringify(reported)).not.toContain(wrong);
    expect(logLines.join('')).not.toContain(wrong);
  });

  it('says why it does not start without allowed users', async () => {
    const channel = startChannel({ allowedUsers: '' });
    expect(channel.status).toMatchObject({ state: 'failed', reason: expect.stringMatching(/^TELEGRAM_ALLOWED_USERS is empty/) });
    expect(api.calls).toEqual([]);
  });

  it('shows an outage as failed and recovers when the API answers again', async () => {
    const channel = startChannel();
    await waitUntil(() => channel.status.state === 'connected');
    api.setDown(true);
    await waitUntil(() => channel.status.state === 'failed');
    expect(channel.status.reason).toMatch(/^Cannot reach the Telegram Bot API/);
    expect(channel.status.reason).not.toContain(api.token);
    api.setDown(false);
    const back = Date.now();
    await waitUntil(() => channel.status.state === 'connected');
    // Back within the longest retry wait, not after a long poll's timeout (5 s here).
    expect(Date.now() - back).toBeLessThan(2_000);
    api.sendText(ada, 'still there?');
    await waitUntil(() => sessions.sent.length === 1);
  });

  it('runs a turn from an allowed user and streams the answer back; a stranger gets nothing, logged once', async () => {
    const channel = startChannel();
    await waitUntil(() => channel.status.state === 'connected');
    api.sendText(stranger, 'let me in');
    api.sendText(stranger, 'please');
    api.sendText(ada, 'What is on today?');
    await waitUntil(() => sessions.sent.length === 1);
    expect(sessions.sent[0]).toMatchObject({ sessionId: `session-${ada}`, text: 'What is on today?', files: [] });
    sessions.emit(`session-${ada}`, { type: 'stream_start' });
    sessions.emit(`session-${ada}`, { type: 'stream_delta', delta: 'Two **meetings** and <script>x</script>' });
    sessions.emit(`session-${ada}`, { type: 'stream_end', content: 'Two **meetings** and <script>x</script>', length: 39, context_tokens: 1, max_context_tokens: 2 });
    await waitUntil(() => api.botMessages(ada)[0]?.text === 'Two meetings and <script>x</script>');
    expect(api.messages(stranger).filter((message) => message.fromBot)).toEqual([]);
    expect(logLines.filter((line) => line.includes(String(stranger)))).toHaveLength(1);
    expect(sessions.sent).toHaveLength(1);
  });

  it('stops the chat\'s run on /stop', async () => {
    const channel = startChannel();
    await waitUntil(() => channel.status.state === 'connected');
    // The chat has a session (a /stop in a chat without one stops nothing and makes none).
    sessions.chatSessions.set(ada, `session-${ada}`);
    api.sendText(ada, '/stop');
    await waitUntil(() => sessions.stopped.length === 1);
    expect(sessions.stopped).toEqual([`session-${ada}`]);
  });

  it('brings a photo to the session as an image file', async () => {
    const channel = startChannel();
    await waitUntil(() => channel.status.state === 'connected');
    const bytes = Buffer.from('\xff\xd8\xff a photo', 'latin1');
    api.sendPhoto(ada, { bytes, caption: 'what is this?' });
    await waitUntil(() => sessions.sent.length === 1);
    expect(sessions.sent[0]!.text).toBe('what is this?');
    expect(sessions.sent[0]!.files).toEqual([{ kind: 'photo', name: expect.stringMatching(/\.jpg$/), mimeType: 'image/jpeg', data: bytes }]);
  });

  it('presents an approval with buttons; Deny pressed decides it and the message says who; a stale press is told so', async () => {
    const channel = startChannel();
    await waitUntil(() => channel.status.state === 'connected');
    api.sendText(ada, 'clean up', { firstName: 'Ada' });
    await waitUntil(() => sessions.sent.length === 1);
    const sessionId = `session-${ada}`;
    sessions.waiting.add('call_7_0');
    const summary = { session_id: sessionId, call_id: 'call_7_0', tool: 'terminal', subject: 'rm -rf build', expires_at: '', reason: '', asked_by: null, deciders: [people.owner] };
    void channel.presentApproval(summary, { reason: 'not read-only', is_subagent: false });
    const approval = await waitUntil(() => api.botMessages(ada).find((message) => message.text.includes('rm -rf build')));
    expect(approval.text).toContain('Why: not read-only');
    const buttons = approval.replyMarkup!.inline_keyboard!.flat();
    expect(buttons.map((button) => button.text)).toEqual(['Allow once', 'Allow for this chat', 'Deny']);
    const press = api.pressButton(ada, approval.message_id, buttons[2]!.callback_data!, { firstName: 'Ada' });
    await waitUntil(() => sessions.decisions.length === 1);
    expect(sessions.decisions[0]).toMatchObject({ callId: 'call_7_0', decision: 'deny', remember: 'once' });
    await waitUntil(() => api.callbackAnswers.has((press.callback_query as { id: string }).id));
    void channel.approvalResolved(summary, { decision: 'deny', by: 'user', remember: 'once', via: 'telegram' });
    await waitUntil(() => api.botMessages(ada).find((message) => message.message_id === approval.message_id)!.text.endsWith('Denied by Ada'));
    expect(api.botMessages(ada).find((message) => message.message_id === approval.message_id)!.replyMarkup).toBeUndefined();

    const stale = api.pressButton(ada, approval.message_id, buttons[0]!.callback_data!);
    await waitUntil(() => api.callbackAnswers.get((stale.callback_query as { id: string }).id));
    expect(api.callbackAnswers.get((stale.callback_query as { id: string }).id)).toMatchObject({ text: 'This approval is already decided.' });
    expect(sessions.decisions).toHaveLength(1);
  });

  it('edits an approval decided in the page', async () => {
    const channel = startChannel();
    await waitUntil(() => channel.status.state === 'connected');
    api.sendText(ada, 'go');
    await waitUntil(() => sessions.sent.length === 1);
    const sessionId = `session-${ada}`;
    const summary = { session_id: sessionId, call_id: 'c1', tool: 'file_write', subject: '/tmp/x', expires_at: '', reason: '', asked_by: null, deciders: [people.owner] };
    void channel.presentApproval(summary, { reason: '', is_subagent: false });
    const approval = await waitUntil(() => api.botMessages(ada).find((message) => message.text.includes('/tmp/x')));
    void channel.approvalResolved(summary, { decision: 'allow', by: 'user', remember: 'session', via: 'page' });
    await waitUntil(() => api.botMessages(ada).find((message) => message.message_id === approval.message_id)!.text.endsWith('Allowed for this chat from the page'));
  });

  it('presents an approval the gate reports for its chat\'s session once, not again for the session\'s own event of it, and shows a page decision', async () => {
    const channel = startChannel();
    await waitUntil(() => channel.status.state === 'connected');
    api.sendText(ada, 'go');
    await waitUntil(() => sessions.sent.length === 1);
    const summary = { session_id: `session-${ada}`, call_id: 'c9', tool: 'terminal', subject: 'make deploy', expires_at: '', reason: '', asked_by: null, deciders: [people.owner] };
    const details = { reason: 'asks', is_subagent: false };
    await Promise.all([
      channel.presentApproval(summary, details),
      channel.presentApproval({ ...summary, session_id: 'some-page-session', call_id: 'c10' }, details),
    ]);
    sessions.emit(summary.session_id, { type: 'approval_required', ...summary, args: {}, ...details });
    // An answer after it, so that a card sent for the session's event would be there by now.
    sessions.emit(summary.session_id, { type: 'stream_start' });
    sessions.emit(summary.session_id, { type: 'stream_end', content: 'Waiting for you.', length: 16, context_tokens: 1, max_context_tokens: 2 });
    await waitUntil(() => api.botMessages(ada).some((message) => message.text === 'Waiting for you.'));
    expect(api.botMessages(ada).filter((message) => message.text.includes('make deploy'))).toHaveLength(1);
    const approval = api.botMessages(ada).find((message) => message.text.includes('make deploy'))!;
    await channel.approvalResolved(summary, { decision: 'allow', by: 'user', remember: 'once', via: 'page' });
    expect(api.botMessages(ada).find((message) => message.message_id === approval.message_id)!.text.endsWith('Allowed once from the page')).toBe(true);
  });
  it('logs an update whose handler failed, without the token, and goes on with the next', async () => {
    const channel = startChannel();
    await waitUntil(() => channel.status.state === 'connected');
    const sessionForChat = sessions.sessionForChat.bind(sessions);
    sessions.sessionForChat = async () => {
      sessions.sessionForChat = sessionForChat;
      throw new Error(`the database is locked (${api.token})`);
    };
    api.sendText(ada, 'first');
    api.sendText(ada, 'second');
    await waitUntil(() => sessions.sent.length === 1);
    expect(sessions.sent[0]!.text).toBe('second');
    const failed = logLines.filter((line) => /update \d+ failed: the database is locked/.test(line));
    expect(failed).toHaveLength(1);
    expect(failed[0]).toContain('<token>');
    expect(logLines.join('')).not.toContain(api.token);
  });

  it('shows a call that waited before the chat followed its session once the chat does, below the answer so far', async () => {
    const channel = startChannel();
    await waitUntil(() => channel.status.state === 'connected');
    const summary = { session_id: `session-${ada}`, call_id: 'c11', tool: 'terminal', subject: 'make backup', expires_at: '', reason: '', asked_by: null, deciders: [people.owner] };
    await channel.presentApproval(summary, { reason: '', is_subagent: false });
    api.sendText(ada, '/help');
    await waitUntil(() => api.botMessages(ada).length === 1);
    expect(api.botMessages(ada).some((message) => message.text.includes('make backup'))).toBe(false);
    api.sendText(ada, 'what is it waiting for?');
    const card = await waitUntil(() => api.botMessages(ada).find((message) => message.text.includes('make backup')));
    expect(card.replyMarkup!.inline_keyboard!.flat().map((button) => button.text)).toEqual(['Allow once', 'Allow for this chat', 'Deny']);
    api.sendText(ada, 'and now?');
    await waitUntil(() => sessions.sent.length === 2);
    expect(api.botMessages(ada).filter((message) => message.text.includes('make backup'))).toHaveLength(1);
  });
});

describe('TelegramChannel: a button counts only from the chat and message it was sent to (issue 31)', () => {
  const answerTo = (update: Update) => waitUntil(() => api.callbackAnswers.get((update.callback_query as { id: string }).id));
  const refusals = (refused: string) => logLines.filter((line) => line.includes(`"refused":"${refused}"`)).map((line) => JSON.parse(line) as Record<string, unknown>);

  async function twoPeople(): Promise<TelegramChannel> {
    const channel = startChannel({ allowedUsers: `${ada},${bob}` });
    await waitUntil(() => channel.status.state === 'connected');
    return channel;
  }

  /** A bot message in the person's chat that carries no buttons (the answer to /help). */
  async function plainMessage(userId: number): Promise<number> {
    const before = api.botMessages(userId).length;
    api.sendText(userId, '/help');
    return (await waitUntil(() => api.botMessages(userId)[before])).message_id;
  }

  async function adaApproval(channel: TelegramChannel) {
    api.sendText(ada, 'clean up', { firstName: 'Ada' });
    await waitUntil(() => sessions.sent.length === 1);
    sessions.waiting.add('call_9_0');
    void channel.presentApproval({ session_id: `session-${ada}`, call_id: 'call_9_0', tool: 'terminal', subject: 'rm -rf build', expires_at: '', reason: '', asked_by: null, deciders: [people.owner] }, { reason: '', is_subagent: false });
    const card = await waitUntil(() => api.botMessages(ada).find((message) => message.text.includes('rm -rf build')));
    return { card, allowOnce: card.replyMarkup!.inline_keyboard!.flat()[0]!.callback_data! };
  }

  it('another person\'s press of an approval\'s data in their own chat is refused, answered, logged, and leaves the approval waiting', async () => {
    const channel = await twoPeople();
    const { card, allowOnce } = await adaApproval(channel);
    const bobsMessage = await plainMessage(bob);
    const press = api.pressButton(bob, bobsMessage, allowOnce, { firstName: 'Bob' });
    expect((await answerTo(press)).text).toBe('This button is not on that approval: it can be decided only where it was asked.');
    expect(sessions.decisions).toEqual([]);
    expect(sessions.waiting.has('call_9_0')).toBe(true);
    expect(api.botMessages(ada).find((message) => message.message_id === card.message_id)!.history).toHaveLength(1);
    expect(refusals('approval button')).toEqual([
      expect.objectContaining({ level: 40, telegramUserId: bob, chatId: bob, messageId: bobsMessage, callbackData: allowOnce }),
    ]);
    expect(refusals('approval button')[0]!.msg).toContain(`shown as message ${card.message_id} in chat ${ada}`);
    expect(logLines.join('')).not.toContain(api.token);

    // Ada's press of the same data on the card decides it.
    const own = api.pressButton(ada, card.message_id, allowOnce, { firstName: 'Ada' });
    expect((await answerTo(own)).text).toBe('Allowed');
    expect(sessions.decisions).toEqual([{ sessionId: `session-${ada}`, callId: 'call_9_0', decision: 'allow', remember: 'once', decider: 'Owner' }]);
  });

  it('the approval\'s data pressed on another message of the same chat is refused too', async () => {
    const channel = await twoPeople();
    const { allowOnce } = await adaApproval(channel);
    const other = await plainMessage(ada);
    expect((await answerTo(api.pressButton(ada, other, allowOnce))).text).toMatch(/not on that approval/);
    expect(sessions.decisions).toEqual([]);
    expect(refusals('approval button')).toEqual([expect.objectContaining({ telegramUserId: ada, chatId: ada, messageId: other })]);
  });

  it('ss: binds only a session the chat\'s last /sessions listed, pressed on that listing', async () => {
    await twoPeople();
    sessions.recent.set(ada, [{ id: 'ada-1', title: 'Garden' }]);
    sessions.recent.set(bob, [{ id: 'bob-1', title: 'Car' }]);
    // Before any listing, and on a message that is not one: refused.
    const bobsMessage = await plainMessage(bob);
    expect((await answerTo(api.pressButton(bob, bobsMessage, 'ss:ada-1'))).text).toBe('That session was not offered here: send /sessions and pick from the new list.');
    api.sendText(bob, '/sessions');
    const listing = await waitUntil(() => api.botMessages(bob).find((message) => message.text === 'Recent sessions:'));
    expect(listing.replyMarkup!.inline_keyboard!.flat().map((button) => button.callback_data)).toEqual(['ss:bob-1']);
    // Another chat's session, forged on the listing itself: refused.
    expect((await answerTo(api.pressButton(bob, listing.message_id, 'ss:ada-1'))).text).toMatch(/not offered here/);
    // A listed session, pressed elsewhere: refused.
    expect((await answerTo(api.pressButton(bob, bobsMessage, 'ss:bob-1'))).text).toMatch(/not offered here/);
    expect(sessions.switched).toEqual([]);
    expect(sessions.chatSessions.get(bob)).toBeUndefined();
    expect(refusals('session switch')).toHaveLength(3);
    expect(refusals('session switch')).toContainEqual(expect.objectContaining({ telegramUserId: bob, chatId: bob, messageId: listing.message_id, callbackData: 'ss:ada-1' }));

    // The listed one, on the listing: bound.
    expect((await answerTo(api.pressButton(bob, listing.message_id, 'ss:bob-1'))).text).toBe('Continuing that session.');
    expect(sessions.switched).toEqual([{ chatId: bob, sessionId: 'bob-1' }]);
  });

  it('a listing\'s buttons are refused after a restart, until /sessions lists again', async () => {
    const first = await twoPeople();
    sessions.recent.set(ada, [{ id: 'ada-1', title: 'Garden' }]);
    api.sendText(ada, '/sessions');
    const listing = await waitUntil(() => api.botMessages(ada).find((message) => message.text === 'Recent sessions:'));
    await first.stop();
    await twoPeople();
    expect((await answerTo(api.pressButton(ada, listing.message_id, 'ss:ada-1'))).text).toMatch(/send \/sessions/);
    expect(sessions.switched).toEqual([]);
    api.sendText(ada, '/sessions');
    const again = await waitUntil(() => api.botMessages(ada).filter((message) => message.text === 'Recent sessions:')[1]);
    expect((await answerTo(api.pressButton(ada, again.message_id, 'ss:ada-1'))).text).toBe('Continuing that session.');
    expect(sessions.switched).toEqual([{ chatId: ada, sessionId: 'ada-1' }]);
  });

  it('data no button of the bot carries is refused and logged', async () => {
    await twoPeople();
    const message = await plainMessage(bob);
    expect((await answerTo(api.pressButton(bob, message, 'pf:server_admin'))).text).toBe('This button does nothing.');
    expect(refusals('unknown button')).toEqual([expect.objectContaining({ telegramUserId: bob, callbackData: 'pf:server_admin' })]);
  });
});

describe('pressedWhereSent', () => {
  const sent = { chatId: ada, messageId: 7 };
  it('holds only for the chat and message sent to, pressed by the person of that chat', () => {
    expect(pressedWhereSent({ chatId: ada, messageId: 7, userId: ada, data: 'x' }, sent)).toBe(true);
    expect(pressedWhereSent({ chatId: bob, messageId: 7, userId: bob, data: 'x' }, sent)).toBe(false);
    expect(pressedWhereSent({ chatId: ada, messageId: 8, userId: ada, data: 'x' }, sent)).toBe(false);
    expect(pressedWhereSent({ chatId: ada, messageId: 7, userId: bob, data: 'x' }, sent)).toBe(false);
  });
});
