import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { AgentEvent } from '../src/protocol/events.ts';
import type { TelegramChannelOptions } from '../src/channels/telegram/telegram-channel.ts';
import type { Logger } from '../src/logger.ts';
import { startHearth, type Hearth } from './support/hearth-server.ts';
import { recordingLogger } from './support/recording-logger.ts';
import type { ScriptedLlm } from './support/scripted-llm.ts';
import { startScriptedOllama } from './support/scripted-ollama.ts';
import { startTelegramBotApi, type TelegramBotApi } from './support/telegram-bot-api.ts';
import { waitUntil } from './support/wait-until.ts';
import { guardedProfile, markingTool } from './support/marking-tool.ts';
import { telegramChannelFor } from './support/telegram-test-channel.ts';

// The Telegram channel (docs/architecture.md, Adding a channel) through the whole app: the real grammY client, the Bot API stand-in, the scripted LLM.

const ada = 7_300_001;
const stranger = 7_399_999;
let hearths: Hearth[] = [];
/** Scripted LLMs shared by two apps in turn (restarts), closed after them. */
const sharedLlms: ScriptedLlm[] = [];
let api: TelegramBotApi | undefined;
let dataDir: string | undefined;

afterEach(async () => {
  for (const hearth of hearths.splice(0)) await hearth.close();
  for (const llm of sharedLlms.splice(0)) await llm.close();
  await api?.close();
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
  api = dataDir = undefined;
});



interface StartOptions {
  backend?: 'ollama' | 'openai';
  runs?: string[];
  channel?: Partial<TelegramChannelOptions>;
  logger?: Logger;
  llm?: ScriptedLlm;
}

async function start(options: StartOptions = {}) {
  api ??= await startTelegramBotApi();
  dataDir ??= await mkdtemp(path.join(tmpdir(), 'hearth-telegram-app-'));
  const channel = telegramChannelFor(api, ada, options.channel);
  const server = await startHearth({
    backend: options.backend ?? 'ollama',
    dataDir,
    tools: [markingTool(options.runs ?? [])],
    profiles: { guarded: guardedProfile },
    channels: [channel],
    ...(options.logger && { logger: options.logger }),
    ...(options.llm && { llm: options.llm }),
  });
  hearths.push(server);
  await waitUntil(() => channel.status.state === 'connected');
  return { server, api, channel };
}

const lastText = (chat: number) => api!.botMessages(chat).at(-1)?.text;

async function chatSession(server: Hearth): Promise<string> {
  return waitUntil(async () => (await server.app.sessions.findByKey(`telegram:${ada}`))?.id);
}

/** Every event of the session from now on, with when it arrived. */
function record(server: Hearth, sessionId: string) {
  const events: Array<{ event: AgentEvent; at: number }> = [];
  server.app.sessions.follow(sessionId, (event) => events.push({ event, at: Date.now() }));
  return events;
}

/** Sends a message and waits for the answer, so that the chat's session exists. */
async function converse(server: Hearth, text: string, answer: string) {
  server.llm.script({ content: answer });
  api!.sendText(ada, text, { firstName: 'Ada' });
  await waitUntil(() => lastText(ada) === answer);
}

for (const backend of ['ollama', 'openai'] as const) {
  describe(`Telegram through the app: answers (${backend})`, () => {
    // The default of a second between calls (1.5 edits a second at most): test/telegram-streamed-answer.test.ts.
    it('streams an answer by edits at no more than 1.5 an interval, with typing while it works', async () => {
      const editIntervalMs = 100;
      const { server, api } = await start({ backend, channel: { editIntervalMs } });
      const chunks = Array.from({ length: 30 }, (_, index) => `word${index} `);
      server.llm.script({ chunks, delayMs: 20 });
      const answer = chunks.join('').trim();
      api.sendText(ada, 'Tell me a story', { firstName: 'Ada' });
      await waitUntil(() => lastText(ada) === answer, 15_000);
      const first = api.callsOf('sendMessage').find((call) => call.body.chat_id === ada)!;
      const edits = api.callsOf('editMessageText').filter((call) => call.body.chat_id === ada);
      expect(edits.length).toBeGreaterThanOrEqual(2);
      const intervals = (edits.at(-1)!.at - first.at) / editIntervalMs;
      expect(edits.length / intervals).toBeLessThanOrEqual(1.5);
      expect(api.botMessages(ada)).toHaveLength(1);
      expect(api.callsOf('sendChatAction').some((call) => call.body.chat_id === ada && call.body.action === 'typing')).toBe(true);
    });

    it('splits 10,000 characters into messages of at most 4,096 that together are the answer', async () => {
      const { server, api } = await start({ backend });
      const answer = Array.from({ length: 100 }, (_, index) => `Line ${String(index).padStart(3, '0')}: ${'abcdefghij'.repeat(9)}`).join('\n');
      expect(answer.length).toBeGreaterThanOrEqual(10_000);
      server.llm.script({ content: answer });
      api.sendText(ada, 'Everything, please', { firstName: 'Ada' });
      await waitUntil(() => api.botMessages(ada).map((message) => message.text).join('').replace(/\s/g, '') === answer.replace(/\s/g, ''), 15_000);
      const texts = api.botMessages(ada).map((message) => message.text);
      expect(texts.length).toBeGreaterThanOrEqual(3);
      for (const text of texts) expect(text.length).toBeLessThanOrEqual(4096);
      // A piece ends at a line break, which a message does not keep at its end.
      expect(texts.map((text) => text.replace(/\n$/, '')).join('\n')).toBe(answer);
    });

    it('/stop ends a run within a second of the update, and the message says so', async () => {
      const { server, api } = await start({ backend });
      await converse(server, 'Hello', 'Hi.');
      const sessionId = await chatSession(server);
      server.llm.script({ chunkCount: 400, chunkText: (index) => `part${index} `, delayMs: 50 });
      const events = record(server, sessionId);
      api.sendText(ada, 'Count slowly', { firstName: 'Ada' });
      await waitUntil(() => api.botMessages(ada).at(-1)?.text.startsWith('part0'));
      const sentAt = Date.now();
      api.sendText(ada, '/stop', { firstName: 'Ada' });
      const stopped = await waitUntil(() => events.find((entry) => entry.event.type === 'stream_stopped'));
      expect(stopped.at).toBeGreaterThanOrEqual(sentAt);
      expect(stopped.at - sentAt).toBeLessThan(1000);
      await waitUntil(() => lastText(ada)?.endsWith('Stopped.'));
      expect(server.app.sessions.isRunning(sessionId)).toBe(false);
    });

    it('a photo reaches the model as an image', async () => {
      const { server, api } = await start({ backend });
      const photo = Buffer.concat([Buffer.from([0xff, 0xd8, 0xff, 0xe0]), Buffer.from('a tiny test photo body'), Buffer.from([0xff, 0xd9])]);
      server.llm.script({ content: 'A nice photo.' });
      api.sendPhoto(ada, { bytes: photo, caption: 'What is this?' }, { firstName: 'Ada' });
      await waitUntil(() => lastText(ada) === 'A nice photo.');
      const request = JSON.stringify(server.llm.requests.at(-1)!.body);
      expect(request).toContain(photo.toString('base64'));
      expect(request).toContain('What is this?');
    });
  });
}

describe('Telegram through the app: commands, approvals, notifications', () => {
  it('/help, /new [profile] and /profile [id] work, and the profile switch is the page\'s', async () => {
    const { server, api } = await start();
    api.sendText(ada, '/stop', { firstName: 'Ada' });
    api.sendText(ada, '/start', { firstName: 'Ada' });
    await waitUntil(() => lastText(ada)?.includes('/sessions'));
    api.sendText(ada, '/help', { firstName: 'Ada' });
    await waitUntil(() => api.botMessages(ada).filter((message) => message.text.includes('/sessions')).length === 2);
    expect(server.llm.requests).toHaveLength(0);
    // Neither /stop with nothing running nor /start nor /help made the chat a session.
    expect(await server.app.sessions.findByKey(`telegram:${ada}`)).toBeUndefined();
    await converse(server, 'Hello', 'Hi.');
    const first = await chatSession(server);
    api.sendText(ada, '/new guarded', { firstName: 'Ada' });
    await waitUntil(() => lastText(ada) === 'A new session has begun with Guarded (guarded).');
    const second = await chatSession(server);
    expect(second).not.toBe(first);
    expect((await server.app.sessions.find(second))!.profileId).toBe('guarded');
    api.sendText(ada, '/new nosuchprofile', { firstName: 'Ada' });
    await waitUntil(() => lastText(ada)?.startsWith('Unknown profile "nosuchprofile"'));
    api.sendText(ada, '/profile', { firstName: 'Ada' });
    await waitUntil(() => lastText(ada)?.startsWith('Profile: Guarded (guarded) ✓\nOthers:\n• '));
    const events = record(server, second);
    // The current profile is marked, never offered among the others.
    expect(lastText(ada)).toContain('• Personal Secretary (/profile secretary)');
    expect(lastText(ada)).not.toContain('/profile guarded');
    api.sendText(ada, '/profile secretary', { firstName: 'Ada' });
    // The reply to the switch itself: the one before it began with "Profile: " too.
    await waitUntil(() => lastText(ada) === 'Profile: Personal Secretary');
    const { body } = await server.request('GET', `/sessions/${second}`);
    expect(body.profile_id).toBe('secretary');
    expect(events.map((entry) => entry.event)).toContainEqual(expect.objectContaining({ type: 'profile_switched', profile_id: 'secretary' }));
  });

  it('/sessions lists the chat\'s recent sessions as buttons, and picking one continues it', async () => {
    const { server, api } = await start();
    await converse(server, 'About the garden', 'Roses.');
    const first = await chatSession(server);
    api.sendText(ada, '/new', { firstName: 'Ada' });
    await waitUntil(() => lastText(ada) === 'A new session has begun with Personal Secretary (secretary).');
    await converse(server, 'About the car', 'Tyres.');
    const second = await chatSession(server);
    api.sendText(ada, '/sessions', { firstName: 'Ada' });
    const list = await waitUntil(() => api.botMessages(ada).find((message) => message.text === 'Recent sessions:'));
    const buttons = list.replyMarkup!.inline_keyboard!.flat();
    expect(buttons.map((button) => button.callback_data)).toEqual([`ss:${second}`, `ss:${first}`]);
    const update = api.pressButton(ada, list.message_id, `ss:${first}`, { firstName: 'Ada' });
    const queryId = (update.callback_query as { id: string }).id;
    await waitUntil(() => api.callbackAnswers.get(queryId));
    expect(api.callbackAnswers.get(queryId)!.text).toBe('Continuing that session.');
    expect(await chatSession(server)).toBe(first);
    await converse(server, 'And the tulips?', 'Also fine.');
    const { body } = await server.request('GET', `/sessions/${first}`);
    expect(body.messages.map((message: { content: string }) => message.content)).toContain('And the tulips?');
  });

  it('a decision made in the page edits the Telegram message, and its buttons are then stale', async () => {
    const runs: string[] = [];
    const { server, api } = await start({ runs });
    api.sendText(ada, '/new guarded', { firstName: 'Ada' });
    await waitUntil(() => lastText(ada) === 'A new session has begun with Guarded (guarded).');
    const sessionId = await chatSession(server);
    server.llm.script({ toolCalls: [{ name: 'mark', arguments: { label: 'gate' } }] }, { content: 'Marked.' });
    api.sendText(ada, 'mark the gate', { firstName: 'Ada' });
    const approval = await waitUntil(() => api.botMessages(ada).find((message) => message.replyMarkup?.inline_keyboard));
    const allow = approval.replyMarkup!.inline_keyboard!.flat().find((button) => button.text === 'Allow once')!;
    expect(approval.text).toContain('gate');
    expect(approval.entities.some((entity) => entity.type === 'pre' || entity.type === 'code')).toBe(true);
    const { body: pending } = await server.request('GET', `/approvals?status=pending&session_id=${sessionId}`);
    const callId = pending.approvals[0].call_id as string;
    const decided = await server.request('POST', `/sessions/${sessionId}/approvals/${callId}`, { decision: 'allow' });
    expect(decided.status).toBe(200);
    await waitUntil(() => api.botMessages(ada).find((message) => message.message_id === approval.message_id)!.text.includes('from the page'));
    await waitUntil(() => lastText(ada) === 'Marked.');
    expect(runs).toEqual(['gate']);
    expect(approval.replyMarkup).toBeUndefined();
    const update = api.pressButton(ada, approval.message_id, allow.callback_data!, { firstName: 'Ada' });
    const queryId = (update.callback_query as { id: string }).id;
    await waitUntil(() => api.callbackAnswers.get(queryId));
    expect(api.callbackAnswers.get(queryId)!.text).toBe('This approval is already decided.');
    expect(runs).toEqual(['gate']);
  });

  it('a reminder (a schedule run) reaches the chat as a notification', async () => {
    const { server, api } = await start();
    // A bot can write only to someone who has started it.
    api.addChat(ada, { firstName: 'Ada' });
    const created = await server.request('POST', '/schedules', { name: 'Water', prompt: 'Remind me to drink water', every: '1h', timezone: 'UTC' });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    server.llm.script({ content: 'Drink a glass of water.' });
    const run = await server.request('POST', `/schedules/${created.body.schedule.id}/run`);
    expect(run.status).toBeLessThan(300);
    const notification = await waitUntil(() => api.botMessages(ada).find((message) => message.text.includes('Water finished')));
    expect(notification.text).toContain('Drink a glass of water.');
  });

  it('a one-off reminder is titled by what it is about, and its Markdown answer arrives rendered', async () => {
    const { server, api } = await start();
    api.addChat(ada, { firstName: 'Ada' });
    const at = new Date(Date.now() + 3_600_000).toISOString();
    const created = await server.request('POST', '/schedules', { name: 'water the plants', prompt: 'Remind me to water the plants', at, timezone: 'UTC' });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    server.llm.script({ content: '**Time to water** the plants:\n\n> the ferns first\n\nUse `the blue can`.' });
    await server.request('POST', `/schedules/${created.body.schedule.id}/run`);
    const notification = await waitUntil(() => api.botMessages(ada).find((message) => message.text.includes('Reminder: water the plants')));
    expect(notification.text).toBe('🔔 Reminder: water the plants\nTime to water the plants:\n\nthe ferns first\n\nUse the blue can.');
    const entity = (type: string) => notification.entities.filter((found) => found.type === type).map((found) => notification.text.slice(found.offset, found.offset + found.length));
    expect(entity('bold')).toEqual(['Reminder: water the plants', 'Time to water']);
    expect(entity('blockquote')).toEqual(['the ferns first']);
    expect(entity('code')).toEqual(['the blue can']);
  });

  it('a stranger gets nothing, nothing is stored, and their id is logged once', async () => {
    const recorded = recordingLogger();
    const { server, api } = await start({ logger: recorded.logger });
    api.sendText(stranger, 'let me in', { firstName: 'Eve' });
    api.sendText(stranger, 'please', { firstName: 'Eve' });
    api.sendPhoto(stranger, { bytes: Buffer.from('photo') }, { firstName: 'Eve' });
    await waitUntil(() => api.pendingUpdates().length === 0);
    // Ada's answer comes after Eve's updates were dealt with.
    await converse(server, 'Hello', 'Hi.');
    expect(api.messages(stranger).filter((message) => message.fromBot)).toEqual([]);
    expect(api.calls.filter((call) => call.body.chat_id === stranger)).toEqual([]);
    const { body: sessions } = await server.request('GET', '/sessions');
    expect(sessions).toHaveLength(1);
    expect(await server.app.sessions.findByKey(`telegram:${stranger}`)).toBeUndefined();
    expect(server.llm.requests.map((request) => JSON.stringify(request.body)).join('')).not.toContain('let me in');
    expect(recorded.lines.filter((line) => line.includes(String(stranger)))).toHaveLength(1);
  });

  it('a restart continues the same chat session', async () => {
    const llm = await startScriptedOllama();
    sharedLlms.push(llm);
    const first = await start({ llm });
    await converse(first.server, 'Remember the number 42', 'Noted.');
    const sessionId = await chatSession(first.server);
    hearths = hearths.filter((hearth) => hearth !== first.server);
    await first.server.close();
    // Every handled update was confirmed, so the new app does not get one again.
    expect(first.api.pendingUpdates()).toEqual([]);
    const second = await start({ llm });
    await converse(second.server, 'Which number?', '42.');
    expect(await chatSession(second.server)).toBe(sessionId);
    const { body } = await second.server.request('GET', `/sessions/${sessionId}`);
    expect(body.messages.map((message: { content: string }) => message.content)).toEqual(['Remember the number 42', 'Noted.', 'Which number?', '42.']);
    const { body: sessions } = await second.server.request('GET', '/sessions');
    expect(sessions).toHaveLength(1);
  });

  it('after a restart, an answer to a message typed in the page reaches the chat without the chat writing first', async () => {
    const llm = await startScriptedOllama();
    sharedLlms.push(llm);
    const first = await start({ llm });
    await converse(first.server, 'Hello', 'Hi.');
    const sessionId = await chatSession(first.server);
    hearths = hearths.filter((hearth) => hearth !== first.server);
    await first.server.close();
    const second = await start({ llm });
    llm.script({ content: 'Answered from the page.' });
    const sent = await second.server.request('POST', `/sessions/${sessionId}/messages`, { content: 'Typed in the page' });
    expect(sent.status).toBe(200);
    await waitUntil(() => lastText(ada) === 'Answered from the page.');
  });

  it('a voice note is kept in the session\'s files', async () => {
    const { server, api } = await start();
    server.llm.script({ content: 'Heard you.' });
    api.sendVoice(ada, { bytes: Buffer.from('OggS voice bytes') }, { firstName: 'Ada' });
    await waitUntil(() => lastText(ada) === 'Heard you.');
    const sessionId = await chatSession(server);
    const files = await readdir(path.join(dataDir!, 'session-files', sessionId));
    const voice = files.find((file) => file.endsWith('.ogg'))!;
    expect(await readFile(path.join(dataDir!, 'session-files', sessionId, voice), 'utf8')).toBe('OggS voice bytes');
    expect(JSON.stringify(server.llm.requests.at(-1)!.body)).toContain('voice note');
  });

  it('an edit refused with 429 waits the retry_after before the next', async () => {
    const { server, api } = await start();
    api.rateLimitNext('editMessageText', 1, 1);
    server.llm.script({ chunkCount: 30, chunkText: (index) => `bit${index} `, delayMs: 60 });
    api.sendText(ada, 'Go on', { firstName: 'Ada' });
    const answer = Array.from({ length: 30 }, (_, index) => `bit${index}`).join(' ');
    await waitUntil(() => lastText(ada) === answer, 15_000);
    const edits = api.callsOf('editMessageText');
    const limited = edits.findIndex((call) => call.errorCode === 429);
    expect(limited).toBeGreaterThanOrEqual(0);
    const next = edits[limited + 1]!;
    expect(next.at - edits[limited]!.answeredAt!).toBeGreaterThanOrEqual(990);
  });
});
