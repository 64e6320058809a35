// The Telegram channel's composers in memory: each mounted on a grammY bot whose Bot API calls are
// answered in the process, with the sessions port played by the test. What the bot sent and what
// the port was asked are the assertions; the channel over the Bot API stand-in is telegram-channel.test.ts.
import { describe, expect, it } from 'vitest';
import { allowedUsersOnly, StrangerLog } from '../../src/channels/telegram/allowed-users.ts';
import { approvalButtons } from '../../src/channels/telegram/approval-buttons.ts';
import { ApprovalCards } from '../../src/channels/telegram/approval-cards.ts';
import { approvalCallbackData } from '../../src/channels/telegram/approval-message.ts';
import { unknownButtons } from '../../src/channels/telegram/button-press.ts';
import { chatPeople } from '../../src/channels/telegram/chat-people.ts';
import { commands } from '../../src/channels/telegram/commands.ts';
import { messages } from '../../src/channels/telegram/messages.ts';
import { SessionListings, sessionButtons } from '../../src/channels/telegram/session-buttons.ts';
import { SessionMirror } from '../../src/channels/telegram/session-mirror.ts';
import { defaultVoiceLimits } from '../../src/channels/telegram/voice-notes.ts';
import { InMemoryBot } from '../support/in-memory-bot.ts';
import { PlayedPeople, playedPerson } from '../support/played-people.ts';
import { PlayedSessions } from '../support/played-telegram-sessions.ts';
import { PlayedSpeech } from '../support/played-speech.ts';
import { recordingLogger } from '../support/recording-logger.ts';
import { waitUntil } from '../support/wait-until.ts';

const ada = 5_100_001;
const bob = 5_100_002;

/** Every composer of the channel, in the channel's order, on one in-memory bot; a household of one until the test adds people. */
function channelComposers() {
  const sessions = new PlayedSessions();
  const people = new PlayedPeople();
  const { logger, lines } = recordingLogger();
  const followed: Array<{ sessionId: string; chatId: number }> = [];
  const failures: string[] = [];
  const follow = (sessionId: string, chatId: number) => void followed.push({ sessionId, chatId });
  const listings = new SessionListings();
  const downloads: string[] = [];
  let cards!: ApprovalCards;
  const bot = new InMemoryBot();
  cards = new ApprovalCards(bot.bot.api, (what) => void failures.push(what));
  bot.bot.use(
    chatPeople(people),
    commands({ sessions, follow, listings }),
    sessionButtons({ sessions, listings, follow, logger }),
    approvalButtons({ cards, sessions, logger }),
    unknownButtons(logger),
    messages({
      sessions,
      follow,
      download: async (fileId) => {
        downloads.push(fileId);
        if (fileId === 'too-big') throw new Error('the file is over 20 MB, more than bots may fetch');
        return Buffer.from(`bytes of ${fileId}`);
      },
      downloadFailed: (error) => (error as Error).message,
      speech: new PlayedSpeech(),
      spoken: { expect: () => undefined },
      voiceLimits: defaultVoiceLimits,
    }),
  );
  const refusals = (refused: string) => lines.filter((line) => line.includes(`"refused":"${refused}"`));
  return { bot, sessions, people, followed, cards, failures, downloads, refusals };
}

describe('commands', () => {
  it('/start and /help answer with the help; /stop in a chat without a session stops nothing and makes none', async () => {
    const { bot, sessions, followed } = channelComposers();
    await bot.handle(bot.message(ada, '/start'));
    await bot.handle(bot.message(ada, '/help'));
    await bot.handle(bot.message(ada, '/stop'));
    expect(bot.sentTo(ada)).toHaveLength(2);
    for (const text of bot.sentTo(ada)) expect(text).toContain('/sessions — continue a recent session');
    expect(sessions.stopped).toEqual([]);
    expect(sessions.chatSessions.size).toBe(0);
    expect(sessions.sent).toEqual([]);
    expect(followed).toEqual([]);
  });

  it('/stop stops the chat\'s session', async () => {
    const { bot, sessions } = channelComposers();
    sessions.chatSessions.set(ada, 'garden');
    await bot.handle(bot.message(ada, '/stop'));
    expect(sessions.stopped).toEqual(['garden']);
  });

  it('/new [profile] makes a new session the chat\'s and mirrors it; a refused profile is said, nothing followed', async () => {
    const { bot, sessions, followed } = channelComposers();
    sessions.unknownProfiles.add('nosuch');
    await bot.handle(bot.message(ada, '/new guarded'));
    expect(bot.sentTo(ada)).toEqual(['A new session has begun with Guarded (guarded).']);
    expect(followed).toEqual([{ sessionId: `session-${ada}-guarded`, chatId: ada }]);
    await bot.handle(bot.message(ada, '/new nosuch'));
    expect(bot.sentTo(ada).at(-1)).toBe('Unknown profile "nosuch".');
    expect(followed).toHaveLength(1);
    expect(sessions.chatSessions.get(ada)).toBe(`session-${ada}-guarded`);
  });

  it('/profile says the profile and the others; /profile <id> switches; a refusal is said', async () => {
    const { bot, sessions } = channelComposers();
    sessions.unknownProfiles.add('nosuch');
    await bot.handle(bot.message(ada, '/profile'));
    await bot.handle(bot.message(ada, '/profile guarded'));
    await bot.handle(bot.message(ada, '/profile nosuch'));
    expect(bot.sentTo(ada)).toEqual(['Profile: Secretary (secretary) ✓\nOthers:\n• Guarded (/profile guarded)', 'Profile: Guarded', 'Unknown profile "nosuch".']);
    expect(sessions.profileOf.get(`session-${ada}`)).toBe('guarded');
  });

  it('/sessions lists at most ten of the chat\'s own as buttons, and only that listing\'s buttons continue one', async () => {
    const { bot, sessions, followed, refusals } = channelComposers();
    await bot.handle(bot.message(ada, '/sessions'));
    expect(bot.sentTo(ada)).toEqual(['No sessions yet.']);
    sessions.recent.set(ada, Array.from({ length: 12 }, (_, index) => ({ id: `s${index}`, title: index === 0 ? '' : `Talk ${index}` })));
    await bot.handle(bot.message(ada, '/sessions'));
    const listing = bot.callsOf('sendMessage').at(-1)!;
    const keyboard = (listing.reply_markup as { inline_keyboard: Array<Array<{ text: string; callback_data: string }>> }).inline_keyboard;
    expect(keyboard).toHaveLength(10);
    expect(keyboard[0]).toEqual([{ text: 'Untitled', callback_data: 'ss:s0' }]);
    const listingId = bot.lastMessageId(ada);
    expect(bot.callsOf('sendMessage').map((call) => call.text)).toEqual(['No sessions yet.', 'Recent sessions:']);

    const unlisted = bot.press(ada, ada, listingId, 'ss:s11');
    await bot.handle(unlisted);
    expect(bot.answerTo(unlisted)?.text).toMatch(/not offered here/);
    expect(refusals('session switch')).toHaveLength(1);
    const listed = bot.press(ada, ada, listingId, 'ss:s3');
    await bot.handle(listed);
    expect(bot.answerTo(listed)?.text).toBe('Continuing that session.');
    expect(sessions.switched).toEqual([{ chatId: ada, sessionId: 's3' }]);
    expect(followed).toEqual([{ sessionId: 's3', chatId: ada }]);
  });
});

describe('approval cards and their buttons', () => {
  const view = (callId: string) => ({ call_id: callId, tool: 'terminal', subject: 'rm -rf build', reason: 'not read-only', is_subagent: false });

  it('a waiting call gets one card however often it is shown; a failed send leaves it to be shown again', async () => {
    const { bot, cards, failures } = channelComposers();
    cards.add(`session-${ada}`, view('c1'));
    expect(cards.unshownIn(`session-${ada}`, ada)).toEqual(['c1']);
    bot.failing.set('sendMessage', 'Bad Request: chat not found');
    await cards.show('c1', ada);
    expect(failures).toEqual(['approval not shown']);
    expect(cards.unshownIn(`session-${ada}`, ada)).toEqual(['c1']);
    bot.failing.clear();
    await Promise.all([cards.show('c1', ada), cards.show('c1', ada)]);
    await cards.show('c1', ada);
    expect(bot.sentTo(ada)).toHaveLength(2);
    expect(bot.sentTo(ada)[1]).toContain('Why: not read-only');
    expect(cards.unshownIn(`session-${ada}`, ada)).toEqual([]);
    // A call the gate never told of, or settled already, gets none.
    await cards.show('never-told', ada);
    expect(bot.sentTo(ada)).toHaveLength(2);
  });

  it('a press on the card decides the call through the port; the gate\'s word edits the card, naming who pressed', async () => {
    const { bot, cards, sessions } = channelComposers();
    sessions.waiting.add('c1');
    cards.add(`session-${ada}`, view('c1'));
    await cards.show('c1', ada);
    const card = bot.lastMessageId(ada);
    const pressed = bot.press(ada, ada, card, approvalCallbackData('c1', 'chat'), 'Ada');
    await bot.handle(pressed);
    expect(bot.answerTo(pressed)?.text).toBe('Allowed');
    expect(sessions.decisions).toEqual([{ sessionId: `session-${ada}`, callId: 'c1', decision: 'allow', remember: 'session', decider: 'Owner' }]);
    await cards.resolve('c1', { decision: 'allow', by: 'user', remember: 'session', via: 'telegram' });
    const [edit] = bot.callsOf('editMessageText');
    expect(edit).toMatchObject({ chat_id: ada, message_id: card });
    expect(edit!.text).toMatch(/Allowed for this chat by Ada<\/b>$/);
    expect(edit!.reply_markup).toBeUndefined();
    // Its buttons are stale now.
    const again = bot.press(ada, ada, card, approvalCallbackData('c1', 'deny'), 'Ada');
    await bot.handle(again);
    expect(bot.answerTo(again)?.text).toBe('This approval is already decided.');
    expect(sessions.decisions).toHaveLength(1);
  });

  it('says who settled a card decided elsewhere: the page, a timeout, a stop', async () => {
    const { bot, cards } = channelComposers();
    const settled = [
      { decision: 'allow', by: 'user', remember: 'once', via: 'page' },
      { decision: 'deny', by: 'timeout', remember: 'once' },
      { decision: 'deny', by: 'stop', remember: 'once' },
    ] as const;
    for (const [index, resolution] of settled.entries()) {
      cards.add(`session-${ada}`, view(`c${index}`));
      await cards.show(`c${index}`, ada);
      await cards.resolve(`c${index}`, resolution);
    }
    expect(bot.callsOf('editMessageText').map((edit) => (edit.text as string).split('\n').at(-1))).toEqual([
      '✅ <b>Allowed once from the page</b>',
      '⛔ <b>Denied: nobody answered in time</b>',
      '⛔ <b>Denied: the run was stopped</b>',
    ]);
  });

  it('a press the gate no longer knows is told the call is decided, and the card is forgotten', async () => {
    const { bot, cards, sessions } = channelComposers();
    cards.add(`session-${ada}`, view('c1'));
    await cards.show('c1', ada);
    const pressed = bot.press(ada, ada, bot.lastMessageId(ada), approvalCallbackData('c1', 'once'), 'Ada');
    await bot.handle(pressed);
    expect(bot.answerTo(pressed)?.text).toBe('This approval is already decided.');
    expect(sessions.decisions).toEqual([]);
    await cards.resolve('c1', { decision: 'deny', by: 'timeout', remember: 'once' });
    expect(bot.callsOf('editMessageText')).toEqual([]);
  });

  it('the card\'s data pressed by another person, or on another message, is refused and logged; other data does nothing', async () => {
    const { bot, cards, sessions, refusals } = channelComposers();
    sessions.waiting.add('c1');
    cards.add(`session-${ada}`, view('c1'));
    await cards.show('c1', ada);
    const data = approvalCallbackData('c1', 'once');
    const card = bot.lastMessageId(ada);
    const byBob = bot.press(bob, bob, card, data, 'Bob');
    const elsewhere = bot.press(ada, ada, card + 1, data, 'Ada');
    const unknown = bot.press(bob, bob, 12, 'pf:server_admin', 'Bob');
    for (const update of [byBob, elsewhere, unknown]) await bot.handle(update);
    expect(bot.answerTo(byBob)?.text).toBe('This button is not on that approval: it can be decided only where it was asked.');
    expect(bot.answerTo(elsewhere)?.text).toMatch(/not on that approval/);
    expect(bot.answerTo(unknown)?.text).toBe('This button does nothing.');
    expect(refusals('approval button')).toHaveLength(2);
    expect(refusals('unknown button')).toHaveLength(1);
    expect(sessions.decisions).toEqual([]);
    expect(sessions.waiting.has('c1')).toBe(true);
  });
});

describe('a household (chatPeople)', () => {
  it('an allowed chat linked to nobody, once the household is more than one, is told how to link and reaches nothing', async () => {
    const { bot, sessions, people, followed } = channelComposers();
    people.joins(playedPerson('Bob'));
    await bot.handle(bot.message(ada, 'Hello'));
    await bot.handle(bot.message(ada, '/sessions'));
    const press = bot.press(ada, ada, 3, 'ss:anything');
    await bot.handle(press);
    expect(bot.sentTo(ada)).toHaveLength(2);
    for (const text of bot.sentTo(ada)) expect(text).toContain('/start CODE');
    expect(bot.answerTo(press)?.text).toMatch(/^Link this chat first/);
    expect(sessions.sent).toEqual([]);
    expect(sessions.askedAs).toEqual([]);
    expect(followed).toEqual([]);
  });

  it('/start <code> links the chat to the code\'s person, who its messages then go as; a wrong code links nothing', async () => {
    const { bot, sessions, people } = channelComposers();
    const bob = people.joins(playedPerson('Bob'));
    people.codes.set('GOODCODE42', bob);
    await bot.handle(bot.message(ada, '/start NOTACODE'));
    expect(bot.sentTo(ada)).toEqual(['That code is not one Hearth gave, or it was used already: get a new one in the page and send /start with it.']);
    await bot.handle(bot.message(ada, '/start GOODCODE42'));
    expect(bot.sentTo(ada).at(-1)).toBe("Linked: this chat is Bob's now, and reaches only their sessions. /help says what it can do.");
    await bot.handle(bot.message(ada, 'Hello'));
    expect(sessions.askedAs).toEqual(['Bob']);
    expect(sessions.sent).toEqual([{ sessionId: `session-${ada}`, text: 'Hello', files: [] }]);
    // /start without a code is the help, for a linked chat as for anyone.
    await bot.handle(bot.message(ada, '/start'));
    expect(bot.sentTo(ada).at(-1)).toContain('/sessions — continue a recent session');
  });

  it('a press on the card by someone the gate does not let decide is refused, logged, and the call still waits', async () => {
    const { bot, cards, sessions, people, refusals } = channelComposers();
    const tim = people.joins(playedPerson('Tim', 'child'));
    people.linkAccount(ada, tim);
    sessions.waiting.add('c1');
    sessions.mayNotDecide.add(tim.id);
    cards.add(`session-${ada}`, { call_id: 'c1', tool: 'terminal', subject: 'rm -rf build', reason: '', is_subagent: false });
    await cards.show('c1', ada);
    const pressed = bot.press(ada, ada, bot.lastMessageId(ada), approvalCallbackData('c1', 'once'), 'Tim');
    await bot.handle(pressed);
    expect(bot.answerTo(pressed)?.text).toBe('Tim may not decide this call.');
    expect(refusals('approval button')).toHaveLength(1);
    expect(sessions.decisions).toEqual([]);
    expect(sessions.waiting.has('c1')).toBe(true);
  });

  it('a card without buttons (the asker who may not decide) counts for nothing when its message is pressed with the call\'s data', async () => {
    const { bot, cards, sessions } = channelComposers();
    sessions.waiting.add('c1');
    cards.add(`session-${ada}`, { call_id: 'c1', tool: 'terminal', subject: 'ls', reason: '', deciders: [{ id: 'person-bob', name: 'Bob' }] });
    await cards.show('c1', ada, { decides: false });
    expect(bot.callsOf('sendMessage').at(-1)!.reply_markup).toBeUndefined();
    expect(bot.sentTo(ada).at(-1)).toContain('Asked of Bob: it goes on once they decide.');
    const pressed = bot.press(ada, ada, bot.lastMessageId(ada), approvalCallbackData('c1', 'once'));
    await bot.handle(pressed);
    expect(bot.answerTo(pressed)?.text).toMatch(/not on that approval/);
    expect(sessions.decisions).toEqual([]);
  });
});

describe('messages', () => {
  it('text, a document and a forward reach the chat\'s session, which the chat then mirrors', async () => {
    const { bot, sessions, followed, downloads } = channelComposers();
    await bot.handle(bot.message(ada, 'Hello'));
    await bot.handle(bot.message(ada, { caption: 'the plan', document: { file_id: 'doc-1', file_unique_id: 'u1', file_name: 'plan.pdf', mime_type: 'application/pdf' } }));
    await bot.handle(bot.message(ada, { text: 'look', forward_origin: { type: 'hidden_user', sender_user_name: 'Carol', date: 0 } }));
    expect(downloads).toEqual(['doc-1']);
    expect(sessions.sent).toEqual([
      { sessionId: `session-${ada}`, text: 'Hello', files: [] },
      { sessionId: `session-${ada}`, text: 'the plan', files: [{ kind: 'document', name: 'plan.pdf', mimeType: 'application/pdf', data: Buffer.from('bytes of doc-1') }] },
      { sessionId: `session-${ada}`, text: 'look', files: [], forwarded: expect.stringContaining('Carol') },
    ]);
    expect(followed[0]).toEqual({ sessionId: `session-${ada}`, chatId: ada });
  });

  it('a file that cannot be fetched is said, and nothing is sent; a message with nothing to send sends nothing', async () => {
    const { bot, sessions } = channelComposers();
    await bot.handle(bot.message(ada, { voice: { file_id: 'too-big', file_unique_id: 'u2', duration: 1 } }));
    expect(bot.sentTo(ada)).toEqual(['That file could not be fetched from Telegram: the file is over 20 MB, more than bots may fetch']);
    await bot.handle(bot.message(ada, { sticker: { file_id: 'st', file_unique_id: 'u3', type: 'regular', width: 1, height: 1, is_animated: false, is_video: false } }));
    expect(sessions.sent).toEqual([]);
  });
});

describe('allowedUsersOnly', () => {
  it('lets through an allowed person\'s private chat only; a stranger is logged once, a group gets nothing', async () => {
    const logged: number[] = [];
    const reached: number[] = [];
    const bot = new InMemoryBot(allowedUsersOnly(new Set([ada]), new StrangerLog((stranger) => void logged.push(stranger.id))), (context) => {
      reached.push(context.from!.id);
    });
    await bot.handle(bot.message(bob, 'let me in'));
    await bot.handle(bot.message(bob, 'please'));
    await bot.handle(bot.message(ada, 'in a group', { chat: { id: -100, type: 'group' } }));
    await bot.handle(bot.message(ada, 'hello'));
    expect(reached).toEqual([ada]);
    expect(logged).toEqual([bob]);
  });
});

describe('SessionMirror', () => {
  it('streams a session\'s answers into its chat, takes no approval from the session\'s events, and breaks an answer for a card', async () => {
    const bot = new InMemoryBot();
    const sessions = new PlayedSessions();
    const mirror = new SessionMirror({ api: bot.bot.api, sessions, editIntervalMs: 5, onFailure: () => undefined });
    expect(mirror.follow('garden', ada)).toBe(true);
    expect(mirror.follow('garden', ada)).toBe(false);
    expect(mirror.chatOf('garden')).toBe(ada);
    sessions.emit('garden', { type: 'stream_start' });
    sessions.emit('garden', { type: 'stream_delta', delta: 'Before the call.' });
    sessions.emit('garden', { type: 'approval_required', call_id: 'c1', tool: 'terminal', args: {}, subject: 'ls', reason: '', expires_at: '', is_subagent: false, asked_by: null, deciders: [] });
    sessions.emit('garden', { type: 'approval_resolved', call_id: 'c1', decision: 'allow', by: 'user', remember: 'once' });
    mirror.breakAnswer('garden');
    sessions.emit('garden', { type: 'stream_delta', delta: 'After it.' });
    sessions.emit('garden', { type: 'stream_end', content: 'After it.', length: 9, context_tokens: 1, max_context_tokens: 2 });
    await waitUntil(() => bot.sentTo(ada).length === 2);
    expect(bot.sentTo(ada)).toEqual(['Before the call.', 'After it.']);
    // Another session for the chat ends the mirror of the first.
    mirror.follow('car', ada);
    expect(mirror.chatOf('garden')).toBeUndefined();
    expect(sessions.listeners.get('garden')!.size).toBe(0);
    mirror.close();
    expect(sessions.listeners.get('car')!.size).toBe(0);
  });
});
