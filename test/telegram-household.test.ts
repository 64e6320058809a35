import { afterEach, describe, expect, it } from 'vitest';
import { sessionServiceSessions } from '../src/channels/telegram/telegram-sessions.ts';
import { startHearth, type Hearth } from './support/hearth-server.ts';
import { markingTool } from './support/marking-tool.ts';
import { addPerson, household, type SignedIn } from './support/people.ts';
import { recordingLogger } from './support/recording-logger.ts';
import { startTelegramBotApi, type TelegramBotApi, type Update } from './support/telegram-bot-api.ts';
import { telegramChannelFor } from './support/telegram-test-channel.ts';
import { waitUntil } from './support/wait-until.ts';

// Telegram in a household (docs/people.md): linked chats, each reaching only its person's sessions,
// through the whole app, the real grammY client and the Bot API stand-in.

const ada = 7_500_001;
const bob = 7_500_002;
const tim = 7_500_003;
const eve = 7_500_004;

// A profile children may use, whose `mark` asks; adults and the owner decide.
const choresProfile = `---\nid: chores\nname: Chores\npeople: [owner, adult, child]\napprovers: [owner, adult]\nmax_iterations: 4\ntools: [mark]\napprovals:\n  default: allow\n  ask: [mark]\n---\nYou mark things.\n`;

let hearth: Hearth | undefined;
let api: TelegramBotApi | undefined;

afterEach(async () => {
  await hearth?.close();
  await api?.close();
  hearth = api = undefined;
});

async function start(runs: string[] = []) {
  api = await startTelegramBotApi();
  const recorded = recordingLogger();
  const channel = telegramChannelFor(api, ada, { allowedUsers: [ada, bob, tim, eve].join(',') });
  hearth = await startHearth({ channels: [channel], tools: [markingTool(runs)], profiles: { chores: choresProfile }, logger: recorded.logger });
  await waitUntil(() => channel.status.state === 'connected');
  // The owner, an adult and a child, each signed in: Ada, Bob and Tim in Telegram.
  const { owner, people } = await household(hearth, ['adult', 'child']);
  const [adult, child] = people;
  return { hearth, api, owner, adult, child, lines: recorded.lines };
}

/** The bot's messages to the chat, newest last. */
const texts = (chat: number) => api!.botMessages(chat).map((message) => message.text);
const lastText = (chat: number) => texts(chat).at(-1);

/** Sends text and waits for the bot's next message to that chat. */
async function say(chat: number, text: string): Promise<string> {
  const before = api!.botMessages(chat).length;
  api!.sendText(chat, text);
  return waitUntil(() => api!.botMessages(chat)[before]?.text);
}

async function linkCode(person: SignedIn): Promise<string> {
  const { status, body } = await person.request('POST', '/me/telegram/link-code');
  expect(status, JSON.stringify(body)).toBe(201);
  expect(Date.parse(body.expires_at) - Date.now()).toBeGreaterThan(9 * 60_000);
  return body.code as string;
}

async function link(chat: number, person: SignedIn): Promise<void> {
  expect(await say(chat, `/start ${await linkCode(person)}`)).toBe(`Linked: this chat is ${person.person.name}'s now, and reaches only their sessions. /help says what it can do.`);
}

async function answerTo(update: Update): Promise<{ text?: string }> {
  const id = (update.callback_query as { id: string }).id;
  return waitUntil(() => api!.callbackAnswers.get(id));
}

/** Sends a message the scripted model answers, and waits for the answer in the chat. */
async function converse(chat: number, text: string, answer: string): Promise<string> {
  hearth!.llm.script({ content: answer });
  api!.sendText(chat, text);
  await waitUntil(() => lastText(chat) === answer);
  return (await hearth!.app.sessions.findByKey(`telegram:${chat}`))!.id;
}

describe('Telegram in a household', () => {
  it('an allowed but unlinked user is told how to link; a wrong or used code is refused; a code links the chat, and DELETE /me/telegram unlinks it, the chat then sent nothing of the person\'s sessions', async () => {
    const { hearth, owner } = await start();
    expect(await say(eve, 'hello')).toContain('This chat is not linked to anyone in this Hearth yet.');
    expect(await say(eve, '/new')).toContain('/start CODE');
    expect(await say(eve, '/start WRONGCODE1')).toMatch(/^That code is not one Hearth gave/);
    expect(hearth.llm.requests).toHaveLength(0);
    expect(await hearth.app.sessions.findByKey(`telegram:${eve}`)).toBeUndefined();

    const code = await linkCode(owner);
    expect(await say(ada, `/start ${code.toLowerCase().replace(/(.{5})/, '$1-')}`)).toBe("Linked: this chat is Owner's now, and reaches only their sessions. /help says what it can do.");
    // The same code again, from another chat: used.
    expect(await say(eve, `/start ${code}`)).toMatch(/^That code is not one Hearth gave, or it was used already/);
    // A new code makes the one before it useless.
    const first = await linkCode(owner);
    await linkCode(owner);
    expect(await say(eve, `/start ${first}`)).toMatch(/^That code is not one Hearth gave/);

    const sessionId = await converse(ada, 'Hello', 'Hi, Owner.');
    expect((await hearth.app.sessions.find(sessionId))!.personId).toBe(owner.person.id);
    const unlinked = await owner.request('DELETE', '/me/telegram');
    expect(unlinked).toEqual({ status: 200, body: { unlinked: 1 } });
    expect(await say(ada, 'still there?')).toContain('This chat is not linked');
    expect(hearth.llm.requests).toHaveLength(1);
    // The chat followed the owner's session; unlinked, it is sent nothing more of it.
    hearth.llm.script({ content: 'Only for the owner.' });
    expect((await owner.request('POST', `/sessions/${sessionId}/messages`, { content: 'From the page' })).status).toBe(200);
    await waitUntil(async () => JSON.stringify((await owner.request('GET', `/sessions/${sessionId}`)).body.messages).includes('Only for the owner.'));
    expect(await say(ada, 'and now?')).toContain('This chat is not linked');
    expect(texts(ada).filter((text) => text.includes('Only for the owner.'))).toEqual([]);
  });

  it('a guest cannot ask for a code', async () => {
    const { hearth } = await start();
    const guest = await addPerson(hearth, { role: 'guest' });
    const { status, body } = await guest.request('POST', '/me/telegram/link-code');
    expect(status).toBe(403);
    expect(body.error.code).toBe('forbidden');
  });

  it('two linked people each reach only their own sessions; a forged ss: of the other\'s session binds nothing', async () => {
    const { hearth, owner, adult, lines } = await start();
    await link(ada, owner);
    await link(bob, adult);
    const adaSession = await converse(ada, 'About my garden', 'Roses.');
    const bobSession = await converse(bob, 'About my car', 'Tyres.');
    expect((await hearth.app.sessions.find(adaSession))!.personId).toBe(owner.person.id);
    expect((await hearth.app.sessions.find(bobSession))!.personId).toBe(adult.person.id);
    const listed = async (person: SignedIn) => ((await person.request('GET', '/sessions')).body as Array<{ session_id: string }>).map((session) => session.session_id);
    expect(await listed(adult)).toEqual([bobSession]);
    expect(await listed(owner)).toEqual([adaSession]);

    // Bob's /sessions offers his own only; Ada's id forged onto his listing is refused and logged.
    api!.sendText(bob, '/sessions');
    const listing = await waitUntil(() => api!.botMessages(bob).find((message) => message.text === 'Recent sessions:'));
    expect(listing.replyMarkup!.inline_keyboard!.flat().map((button) => button.callback_data)).toEqual([`ss:${bobSession}`]);
    const forged = api!.pressButton(bob, listing.message_id, `ss:${adaSession}`);
    expect((await answerTo(forged)).text).toMatch(/not offered here/);
    expect(lines.some((line) => line.includes('"refused":"session switch"') && line.includes(String(bob)))).toBe(true);
    expect((await hearth.app.sessions.findByKey(`telegram:${bob}`))!.id).toBe(bobSession);
    // Past the listing, the sessions port itself refuses another person's session as a missing one.
    const port = sessionServiceSessions(hearth.app.sessions);
    expect(await port.switchSession(bob, { person: adult.person, linked: true }, adaSession)).toEqual({ ok: false, reason: 'That session is gone.' });
    // And what Bob writes goes on in his session, never Ada's.
    await converse(bob, 'And the brakes?', 'Fine.');
    const { body: adas } = await owner.request('GET', `/sessions/${adaSession}`);
    expect(JSON.stringify(adas.messages)).not.toContain('brakes');
  });

  it('a notification reaches only the linked chats of the person it is for', async () => {
    const { hearth, owner, adult } = await start();
    await link(ada, owner);
    await link(bob, adult);
    const created = await adult.request('POST', '/schedules', { name: 'Water', prompt: 'Remind me to drink water', every: '1h', timezone: 'UTC' });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    hearth.llm.script({ content: 'Drink a glass of water.' });
    expect((await adult.request('POST', `/schedules/${created.body.schedule.id}/run`)).status).toBeLessThan(300);
    await waitUntil(() => texts(bob).some((text) => text.includes('Water finished')));
    // Ada's chat heard nothing of it: the owner sees no one else's notifications either.
    api!.sendText(ada, '/help');
    await waitUntil(() => texts(ada).some((text) => text.includes('/sessions — continue')));
    expect(texts(ada).filter((text) => text.includes('Water'))).toEqual([]);
  });

  it('a child may not switch to a profile their role may not use', async () => {
    const { child } = await start();
    await link(tim, child);
    await converse(tim, 'Hi', 'Hello.');
    expect(await say(tim, '/profile server_admin')).toMatch(/may not use the profile "server_admin"/);
    expect(await say(tim, '/new server_admin')).toMatch(/may not use the profile "server_admin"/);
    const profiles = await say(tim, '/profile');
    expect(profiles).not.toContain('server_admin');
  });

  it('a child\'s ask goes to the chats of those who may decide, with who asked; the child\'s chat cannot decide it, a cross-chat press is refused, and the adult\'s press decides as the adult', async () => {
    const runs: string[] = [];
    const { hearth, owner, adult, child, lines } = await start(runs);
    await link(ada, owner);
    await link(bob, adult);
    await link(tim, child);
    expect(await say(tim, '/new chores')).toBe('A new session has begun with Chores (chores).');
    hearth.llm.script({ toolCalls: [{ name: 'mark', arguments: { label: 'gate' } }] }, { content: 'Marked.' });
    api!.sendText(tim, 'mark the gate');
    const hasButtons = (chat: number) => api!.botMessages(chat).find((message) => message.text.includes('gate') && message.replyMarkup?.inline_keyboard);
    const bobsCard = await waitUntil(() => hasButtons(bob));
    const adasCard = await waitUntil(() => hasButtons(ada));
    expect(bobsCard.text).toContain(`Asked by ${child.person.name}`);
    const timsNote = await waitUntil(() => api!.botMessages(tim).find((message) => message.text.includes('Waiting for a decision')));
    expect(timsNote.replyMarkup).toBeUndefined();
    expect(timsNote.text).toContain(adult.person.name);
    const allowOnce = bobsCard.replyMarkup!.inline_keyboard!.flat().find((button) => button.text === 'Allow once')!.callback_data!;

    // The child presses the data on the note in his own chat; Bob on another message of his chat than his card: both refused.
    const byChild = api!.pressButton(tim, timsNote.message_id, allowOnce);
    expect((await answerTo(byChild)).text).toMatch(/not on that approval/);
    const linkedMessage = api!.botMessages(bob).find((message) => message.text.startsWith('Linked'))!;
    const offCard = api!.pressButton(bob, linkedMessage.message_id, allowOnce);
    expect((await answerTo(offCard)).text).toMatch(/not on that approval/);
    expect(lines.filter((line) => line.includes('"refused":"approval button"'))).toHaveLength(2);
    expect(runs).toEqual([]);
    const { body: waiting } = await adult.request('GET', '/approvals?status=pending');
    expect(waiting.approvals).toHaveLength(1);

    const decided = api!.pressButton(bob, bobsCard.message_id, allowOnce);
    expect((await answerTo(decided)).text).toBe('Allowed');
    await waitUntil(() => lastText(tim) === 'Marked.');
    expect(runs).toEqual(['gate']);
    const { body: audit } = await adult.request('GET', '/approvals?status=all');
    expect(audit.approvals[0]).toMatchObject({ decision: 'allow', via: 'telegram', decider: { id: adult.person.id }, asked_by: { id: child.person.id } });
    // Every card of the call says who decided, the child's note too.
    for (const [chat, message] of [[bob, bobsCard], [ada, adasCard], [tim, timsNote]] as const) {
      await waitUntil(() => api!.botMessages(chat).find((sent) => sent.message_id === message.message_id)!.text.endsWith(`Allowed once by ${adult.person.name}`));
    }
  });
});
