// Issue 33: on a household's bot, Bob (an adult, his chat linked to him) presses from his own chat
// the callback data of an approval shown in Ada's chat (the owner's, linked to her), and sends a
// forged `ss:<id>` naming Ada's session, hoping to decide her call or read her history. Replayed
// through the real server (Telegram turned on by the configuration, the Bot API stand-in, a
// scripted model), in this process and again with Hearth run as an unprivileged user: both chats
// are linked with codes from the REST API, both presses are refused and logged, Ada's call waits
// for her, and nothing of Ada's reaches Bob, his model requests or his REST answers.
import { stat } from 'node:fs/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { signInCookie } from '../../src/server/identify.ts';
import { startHearth } from '../support/hearth-server.ts';
import { sessionFrom } from '../support/people.ts';
import { recordingLogger } from '../support/recording-logger.ts';
import type { ScriptedLlm } from '../support/scripted-llm.ts';
import { startTelegramBotApi, type TelegramBotApi, type Update } from '../support/telegram-bot-api.ts';
import { unprivilegedUser } from '../support/unprivileged-user.ts';
import { waitUntil } from '../support/wait-until.ts';
import { startJailedHearth } from './jail-harness.ts';

const ada = 7_320_001;
const bob = 7_320_002;
const adaSecret = 'my locker code is 5821-K';
const bobMarker = 'bob-asks-3e9a';
const authToken = 'household-reach-auth-token-0123456789';

const guardedProfile = `---\nid: guarded\nname: Guarded\nmax_iterations: 4\nplanning_enabled: false\ntools: [scratchpad]\napprovals:\n  default: allow\n  ask: [scratchpad]\n---\nYou keep notes.\n`;

type Request = (method: string, url: string, body?: unknown) => Promise<{ status: number; body: any }>;

interface TelegramHearth {
  llm: ScriptedLlm;
  baseUrl: string;
  /** As the owner (AUTH_TOKEN). */
  request: Request;
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
  const hearth = await startHearth({ env: { ...telegramEnvironment(api), AUTH_TOKEN: authToken }, profiles: { guarded: guardedProfile }, logger: recorded.logger });
  const request: Request = (method, url, body) => hearth.request(method, url, body, { authorization: `Bearer ${authToken}` });
  return { llm: hearth.llm, baseUrl: hearth.baseUrl, request, logs: () => recorded.lines.join(''), close: () => hearth.close() };
}

async function asUnprivilegedUser(api: TelegramBotApi): Promise<TelegramHearth> {
  const user = await unprivilegedUser();
  const hearth = await startJailedHearth({ user, environment: telegramEnvironment(api), profiles: { guarded: guardedProfile } });
  expect((await stat(`/proc/${hearth.pid}`)).uid).toBe(user.uid);
  return { llm: hearth.llm, baseUrl: hearth.baseUrl, request: hearth.request, logs: () => hearth.output(), close: () => hearth.close() };
}

/** Requests as someone signed in with the cookie. */
function withCookie(baseUrl: string, session: string): Request {
  return async (method, url, body) => {
    const response = await fetch(baseUrl + url, {
      method,
      headers: { cookie: `${signInCookie}=${session}`, ...(body !== undefined && { 'content-type': 'application/json' }) },
      ...(body !== undefined && { body: JSON.stringify(body) }),
    });
    const text = await response.text();
    return { status: response.status, body: text === '' ? undefined : JSON.parse(text) };
  };
}

/** The owner chooses a passphrase and adds Bob, an adult, who signs in. */
async function addBob(hearth: TelegramHearth): Promise<Request> {
  expect((await hearth.request('PATCH', '/me', { passphrase: 'the owner passphrase 1' })).status).toBeLessThan(300);
  const added = await hearth.request('POST', '/people', { name: 'Bob', role: 'adult', passphrase: 'bob passphrase 12345' });
  expect(added.status, JSON.stringify(added.body)).toBe(201);
  const signedIn = await fetch(`${hearth.baseUrl}/auth/sign-in`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'Bob', passphrase: 'bob passphrase 12345' }),
  });
  expect(signedIn.status).toBe(200);
  return withCookie(hearth.baseUrl, sessionFrom(signedIn.headers.getSetCookie()));
}

async function linkChat(api: TelegramBotApi, chat: number, request: Request): Promise<void> {
  const { status, body } = await request('POST', '/me/telegram/link-code');
  expect(status).toBe(201);
  api.sendText(chat, `/start ${body.code}`);
  await waitUntil(() => api.botMessages(chat).at(-1)?.text.startsWith('Linked:'));
}

function callbackAnswer(api: TelegramBotApi, update: Update): Promise<Record<string, unknown>> {
  const id = (update.callback_query as { id: string }).id;
  return waitUntil(() => api.callbackAnswers.get(id));
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
  await waitUntil(async () => {
    const { body } = await hearth.request('GET', '/integrations');
    return (body.integrations as Array<{ name: string; status: string }>).some((entry) => entry.name === 'telegram' && entry.status === 'connected');
  }, 30_000);
  const lastBotText = (chatId: number) => api.botMessages(chatId).at(-1)?.text;
  const bobRequest = await addBob(hearth);
  await linkChat(api, ada, hearth.request);
  await linkChat(api, bob, bobRequest);

  // Ada: a session of her own holding something private, then a call that waits for her.
  api.sendText(ada, '/new guarded');
  await waitUntil(() => lastBotText(ada) === 'A new session has begun with Guarded (guarded).');
  hearth.llm.script({ content: 'Noted.' });
  api.sendText(ada, adaSecret);
  await waitUntil(() => lastBotText(ada) === 'Noted.');
  hearth.llm.script({ toolCalls: [{ name: 'scratchpad', arguments: { action: 'write', section: 'door', content: 'locked' } }] });
  api.sendText(ada, 'note that the door is locked');
  const card = await waitUntil(() => api.botMessages(ada).find((message) => message.replyMarkup?.inline_keyboard));
  const allowOnce = card.replyMarkup!.inline_keyboard!.flat().find((button) => button.text === 'Allow once')!.callback_data!;
  const { body: pending } = await hearth.request('GET', '/approvals?status=pending');
  const adaSession = pending.approvals[0].session_id as string;
  // An adult decides their own calls and children's, not the owner's: Bob's chat got no card.
  expect(api.botMessages(bob).filter((message) => message.replyMarkup?.inline_keyboard)).toEqual([]);

  // Bob presses Ada's "Allow once" from his own chat: refused, and her call still waits.
  const linked = api.botMessages(bob).at(-1)!;
  const press = api.pressButton(bob, linked.message_id, allowOnce);
  expect((await callbackAnswer(api, press)).text).toMatch(/not on that approval/);
  await waitUntil(() => refusals(hearth, 'approval button').length === 1);
  expect((await hearth.request('GET', '/approvals?status=pending')).body.approvals).toHaveLength(1);
  hearth.llm.script({ content: 'Written.' });
  expect((await callbackAnswer(api, api.pressButton(ada, card.message_id, allowOnce))).text).toBe('Allowed');
  await waitUntil(() => lastBotText(ada) === 'Written.');

  // Bob, in his own session, sends a forged `ss:` naming Ada's session on his /sessions listing.
  hearth.llm.script({ content: 'Hello Bob.' });
  api.sendText(bob, `${bobMarker}: hello`);
  await waitUntil(() => lastBotText(bob) === 'Hello Bob.');
  api.sendText(bob, '/sessions');
  const listing = await waitUntil(() => api.botMessages(bob).find((message) => message.text === 'Recent sessions:'));
  expect(listing.replyMarkup!.inline_keyboard!.flat().map((button) => button.callback_data)).not.toContain(`ss:${adaSession}`);
  const forged = api.pressButton(bob, listing.message_id, `ss:${adaSession}`);
  expect((await callbackAnswer(api, forged)).text).toMatch(/not offered here/);
  await waitUntil(() => refusals(hearth, 'session switch').length === 1);

  // Bob's next message stays in his own session: the model sees none of Ada's history, nor does his REST.
  hearth.llm.script({ content: 'Nothing of yours yet.' });
  api.sendText(bob, `${bobMarker}: what did I tell you before?`);
  await waitUntil(() => [bob, ada].some((chat) => lastBotText(chat) === 'Nothing of yours yet.'));
  expect(lastBotText(bob)).toBe('Nothing of yours yet.');
  const bobRequests = hearth.llm.requests.map((request) => JSON.stringify(request.body)).filter((body) => body.includes(bobMarker));
  expect(bobRequests).toHaveLength(2);
  for (const body of bobRequests) expect(body).not.toContain('5821-K');
  expect(api.messages(bob).map((message) => message.text).join('\n')).not.toContain('5821-K');
  expect((await bobRequest('GET', `/sessions/${adaSession}`)).status).toBe(404);
  expect(JSON.stringify((await bobRequest('GET', '/sessions')).body)).not.toContain(adaSession);
  expect(hearth.logs()).not.toContain(api.token.split(':')[1]);
}

describe('Telegram in a household: a linked chat reaches only its person\'s sessions and cards (issue 33)', () => {
  it('Bob\'s press on Ada\'s approval and his forged ss: are refused and logged; Ada\'s session stays hers', async () => {
    await replayAttack(inProcess);
  }, 60_000);

  it('the same, with Hearth run by an unprivileged user', async () => {
    await replayAttack(asUnprivilegedUser);
  }, 120_000);
});
