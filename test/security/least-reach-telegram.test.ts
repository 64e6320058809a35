// Issue 31, attack 6: two people are allowed on the bot. Bob presses, from his own chat, a
// button with the callback data of an approval shown in Ada's chat, and sends a forged `ss:<id>`
// callback naming Ada's session, hoping to continue it and read her history through the model.
// Replayed through the real server (Telegram turned on by the configuration, against the Bot API
// stand-in, with a scripted model), in this process and again with Hearth run as an
// unprivileged user: both presses are refused and logged, Ada's approval waits until she
// decides it, Bob's chat stays his own and nothing of Ada's reaches him or his model requests.
import { stat } from 'node:fs/promises';
import { afterEach, describe, expect, it } from 'vitest';
import type { ScriptedLlm } from '../support/scripted-llm.ts';
import { sessionServiceSessions } from '../../src/channels/telegram/telegram-sessions.ts';
import { startHearth } from '../support/hearth-server.ts';
import { recordingLogger } from '../support/recording-logger.ts';
import { startTelegramBotApi, type TelegramBotApi, type Update } from '../support/telegram-bot-api.ts';
import { unprivilegedUser } from '../support/unprivileged-user.ts';
import { waitUntil } from '../support/wait-until.ts';
import { startJailedHearth } from './jail-harness.ts';

const ada = 7_310_001;
const bob = 7_310_002;
const adaSecret = 'my locker code is 4711-Q';
const bobMarker = 'bob-asks-7c1f';

const guardedProfile = `---\nid: guarded\nname: Guarded\nmax_iterations: 4\nplanning_enabled: false\ntools: [scratchpad]\napprovals:\n  default: allow\n  ask: [scratchpad]\n---\nYou keep notes.\n`;

interface TelegramHearth {
  llm: ScriptedLlm;
  request(method: string, url: string, body?: unknown): Promise<{ status: number; body: any }>;
  /** Everything logged so far. */
  logs(): string;
  close(): Promise<void>;
}

const cleanups: Array<() => Promise<void>> = [];

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function telegramEnvironment(api: TelegramBotApi): Record<string, string> {
  return { TELEGRAM_API_ROOT: api.apiRoot, TELEGRAM_BOT_TOKEN: api.token, TELEGRAM_ALLOWED_USERS: `${ada},${bob}` };
}

async function inProcess(api: TelegramBotApi): Promise<TelegramHearth> {
  const recorded = recordingLogger();
  const hearth = await startHearth({ env: telegramEnvironment(api), profiles: { guarded: guardedProfile }, logger: recorded.logger });
  return { llm: hearth.llm, request: hearth.request, logs: () => recorded.lines.join(''), close: () => hearth.close() };
}

async function asUnprivilegedUser(api: TelegramBotApi): Promise<TelegramHearth> {
  const user = await unprivilegedUser();
  const hearth = await startJailedHearth({ user, environment: telegramEnvironment(api), profiles: { guarded: guardedProfile } });
  expect((await stat(`/proc/${hearth.pid}`)).uid).toBe(user.uid);
  return { llm: hearth.llm, request: hearth.request, logs: () => hearth.output(), close: () => hearth.close() };
}

async function integrationConnected(hearth: TelegramHearth): Promise<boolean> {
  const { body } = await hearth.request('GET', '/integrations');
  return (body.integrations as Array<{ name: string; status: string }>).some((entry) => entry.name === 'telegram' && entry.status === 'connected');
}

function callbackAnswer(api: TelegramBotApi, update: Update): Promise<Record<string, unknown>> {
  const id = (update.callback_query as { id: string }).id;
  return waitUntil(() => api.callbackAnswers.get(id));
}

async function pendingApprovals(hearth: TelegramHearth): Promise<Array<{ session_id: string; call_id: string }>> {
  const { body } = await hearth.request('GET', '/approvals?status=pending');
  return body.approvals;
}

/** The warnings logged for Bob's refused presses of one kind. */
function refusals(hearth: TelegramHearth, refused: string): string[] {
  return hearth.logs().split('\n').filter((line) => line.includes(`"refused":"${refused}"`) && line.includes(`"telegramUserId":${bob}`) && line.includes(`"chatId":${bob}`));
}

async function replayAttack(start: (api: TelegramBotApi) => Promise<TelegramHearth>): Promise<void> {
  const api = await startTelegramBotApi();
  cleanups.push(() => api.close());
  const hearth = await start(api);
  cleanups.push(() => hearth.close());
  await waitUntil(() => integrationConnected(hearth), 30_000);
  const lastBotText = (chatId: number) => api.botMessages(chatId).at(-1)?.text;

  // Ada: a session of her own holding something private, then a call that waits for her.
  api.sendText(ada, '/new guarded', { firstName: 'Ada' });
  await waitUntil(() => lastBotText(ada) === 'A new session has begun with Guarded (guarded).');
  hearth.llm.script({ content: 'Noted.' });
  api.sendText(ada, adaSecret, { firstName: 'Ada' });
  await waitUntil(() => lastBotText(ada) === 'Noted.');
  // The answer after the call is scripted once Ada decides (the script is one queue).
  hearth.llm.script({ toolCalls: [{ name: 'scratchpad', arguments: { action: 'write', section: 'door', content: 'locked' } }] });
  api.sendText(ada, 'note that the door is locked', { firstName: 'Ada' });
  const card = await waitUntil(() => api.botMessages(ada).find((message) => message.replyMarkup?.inline_keyboard));
  const allowOnce = card.replyMarkup!.inline_keyboard!.flat().find((button) => button.text === 'Allow once')!.callback_data!;
  const [waiting] = await waitUntil(async () => {
    const pending = await pendingApprovals(hearth);
    return pending.length === 1 ? pending : undefined;
  });
  const adaSession = waiting!.session_id;

  // Bob presses Ada's "Allow once" from his own chat.
  api.sendText(bob, '/help', { firstName: 'Bob' });
  const help = await waitUntil(() => api.botMessages(bob).find((message) => message.text.includes('/sessions')));
  const press = api.pressButton(bob, help.message_id, allowOnce, { firstName: 'Bob' });
  expect((await callbackAnswer(api, press)).text).toMatch(/not on that approval/);
  await waitUntil(() => refusals(hearth, 'approval button').length === 1);
  expect(await pendingApprovals(hearth)).toEqual([expect.objectContaining({ session_id: adaSession, call_id: waiting!.call_id })]);
  expect(api.botMessages(ada).find((message) => message.message_id === card.message_id)!.history).toHaveLength(1);

  // Ada's own press still decides her call.
  hearth.llm.script({ content: 'Written.' });
  const adaPress = api.pressButton(ada, card.message_id, allowOnce, { firstName: 'Ada' });
  expect((await callbackAnswer(api, adaPress)).text).toBe('Allowed');
  await waitUntil(() => api.botMessages(ada).find((message) => message.message_id === card.message_id)!.text.endsWith('Allowed once by Ada'));
  await waitUntil(() => lastBotText(ada) === 'Written.');
  expect(await pendingApprovals(hearth)).toEqual([]);

  const adaMessagesBefore = (await hearth.request('GET', `/sessions/${adaSession}`)).body.messages.length;

  // Bob, in a session of his own, sends a forged `ss:` naming Ada's session on his /sessions listing and on another message.
  hearth.llm.script({ content: 'Hello Bob.' });
  api.sendText(bob, `${bobMarker}: hello`, { firstName: 'Bob' });
  await waitUntil(() => lastBotText(bob) === 'Hello Bob.');
  api.sendText(bob, '/sessions', { firstName: 'Bob' });
  const listing = await waitUntil(() => api.botMessages(bob).find((message) => message.text === 'Recent sessions:'));
  expect(listing.replyMarkup!.inline_keyboard!.flat().map((button) => button.callback_data)).not.toContain(`ss:${adaSession}`);
  for (const messageId of [listing.message_id, help.message_id]) {
    const forged = api.pressButton(bob, messageId, `ss:${adaSession}`, { firstName: 'Bob' });
    expect((await callbackAnswer(api, forged)).text).toMatch(/not offered here/);
  }
  await waitUntil(() => refusals(hearth, 'session switch').length === 2);

  // Bob's next message stays in his own session: the model sees none of Ada's history.
  hearth.llm.script({ content: 'Nothing of yours yet.' });
  api.sendText(bob, `${bobMarker}: what did I tell you before?`, { firstName: 'Bob' });
  // Had the forged press bound Bob's chat to Ada's session, the answer would go to the chat following that session: Ada's.
  await waitUntil(() => [bob, ada].some((chat) => lastBotText(chat) === 'Nothing of yours yet.'));
  expect(lastBotText(bob)).toBe('Nothing of yours yet.');
  const bobRequests = hearth.llm.requests.map((request) => JSON.stringify(request.body)).filter((body) => body.includes(bobMarker));
  expect(bobRequests).toHaveLength(2);
  for (const body of bobRequests) expect(body).not.toContain('4711-Q');
  expect(api.messages(bob).map((message) => message.text).join('\n')).not.toContain('4711-Q');
  const adaAfter = (await hearth.request('GET', `/sessions/${adaSession}`)).body.messages as Array<{ content: string }>;
  expect(adaAfter).toHaveLength(adaMessagesBefore);
  expect(JSON.stringify(adaAfter)).not.toContain(bobMarker);

  expect(hearth.logs()).not.toContain(api.token.split(':')[1]);
}

describe('Telegram: a button counts only where it was sent (issue 31, attack 6)', () => {
  it('Bob\'s press on Ada\'s approval and his forged ss: are refused and logged; Ada\'s session is untouched', async () => {
    await replayAttack(inProcess);
  }, 60_000);

  it('the same, with Hearth run by an unprivileged user', async () => {
    await replayAttack(asUnprivilegedUser);
  }, 120_000);
});

describe('Telegram sessions: a chat lists and continues only its own', () => {
  it('lists the chat\'s sessions (one bound before chats were marked included), never another chat\'s, and will not continue another chat\'s', async () => {
    const hearth = await startHearth();
    cleanups.push(() => hearth.close());
    const service = hearth.app.sessions;
    const sessions = sessionServiceSessions(service);
    // A household of one: both chats act as the owner unlinked, and each still reaches only its own.
    const chat = { person: await hearth.deps.household.firstOwner(), linked: false };
    const talk = async (sessionId: string, text: string) => {
      hearth.llm.script({ content: 'Noted.' });
      const sent = service.send(sessionId, { content: text });
      if (sent.ok) await sent.outcome;
    };
    // Bound by an older Hearth, without the chat's mark.
    const legacy = await service.create({ origin: 'telegram' });
    if (!legacy.ok) throw new Error(legacy.message);
    await service.bindKey(`telegram:${ada}`, legacy.session.id);
    await talk(legacy.session.id, 'ada legacy');
    const adaNew = await sessions.newSession(ada, chat);
    if (!adaNew.ok) throw new Error(adaNew.reason);
    await talk(adaNew.sessionId, 'ada new');
    const bobSession = await sessions.sessionForChat(bob, chat);
    await talk(bobSession, 'bob first');

    expect((await sessions.recentSessions(ada, chat)).map((session) => session.id)).toEqual([adaNew.sessionId, legacy.session.id]);
    expect((await sessions.recentSessions(bob, chat)).map((session) => session.id)).toEqual([bobSession]);
    expect(await sessions.switchSession(bob, chat, adaNew.sessionId)).toEqual({ ok: false, reason: 'That session is gone.' });
    expect((await service.findByKey(`telegram:${bob}`))?.id).toBe(bobSession);
    // Continuing the unmarked one keeps it, and the one left, the chat's.
    const legacyOnly = await service.create({ origin: 'telegram' });
    if (!legacyOnly.ok) throw new Error(legacyOnly.message);
    await service.bindKey(`telegram:${ada}`, legacyOnly.session.id);
    await talk(legacyOnly.session.id, 'ada older legacy');
    expect(await sessions.switchSession(ada, chat, legacy.session.id)).toEqual({ ok: true });
    expect((await service.findByKey(`telegram:${ada}`))?.id).toBe(legacy.session.id);
    expect((await sessions.recentSessions(ada, chat)).map((session) => session.id)).toEqual([legacyOnly.session.id, adaNew.sessionId, legacy.session.id]);
  });
});
