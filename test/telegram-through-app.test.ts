import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { useHearth } from './support/hearth-server.ts';
import { startTelegramBotApi, type TelegramBotApi } from './support/telegram-bot-api.ts';
import { waitUntil } from './support/wait-until.ts';
import { guardedProfile, markingTool } from './support/marking-tool.ts';
import { telegramChannelFor } from './support/telegram-test-channel.ts';

// The Telegram channel on the real app and session service, against the Bot API stand-in.

const ada = 7_100_001;
let api: TelegramBotApi | undefined;
let dataDir: string | undefined;

afterEach(async () => {
  await api?.close();
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
  api = dataDir = undefined;
});
// Registered after the hook above, so the app is closed before what it uses is removed (hooks run last-registered first).
const startApp = useHearth();



async function start(backend: 'ollama' | 'openai', runs: string[] = []) {
  api = await startTelegramBotApi();
  dataDir = await mkdtemp(path.join(tmpdir(), 'hearth-telegram-'));
  const channel = telegramChannelFor(api, ada);
  const hearth = await startApp({ backend, dataDir, tools: [markingTool(runs)], profiles: { guarded: guardedProfile }, channels: [channel] });
  await waitUntil(() => channel.status.state === 'connected');
  return { server: hearth, api, channel };
}

for (const backend of ['ollama', 'openai'] as const) {
  describe(`Telegram channel through the app (${backend})`, () => {
    it('answers a message in a session marked telegram, the model\'s HTML arriving as text', async () => {
      const { server, api } = await start(backend);
      server.llm.script({ content: 'Two **meetings** today. <script>alert(1)</script>' });
      api.sendText(ada, 'What is on today?', { firstName: 'Ada' });
      await waitUntil(() => api.botMessages(ada).at(-1)?.text === 'Two meetings today. <script>alert(1)</script>');
      const { body } = await server.request('GET', '/sessions');
      const sessions = (body.sessions ?? body) as Array<{ id?: string; session_id?: string; origin?: string }>;
      expect(sessions.filter((session) => session.origin === 'telegram')).toHaveLength(1);
      const { body: integrations } = await server.request('GET', '/integrations');
      expect(integrations.integrations).toContainEqual({ name: 'telegram', status: 'connected', details: { bot: '@hearth_test_bot' } });
    });

    it('Deny pressed: nothing runs, and the message says who denied it', async () => {
      const runs: string[] = [];
      const { server, api } = await start(backend, runs);
      api.sendText(ada, '/new guarded', { firstName: 'Ada' });
      await waitUntil(() => api.botMessages(ada).some((message) => message.text === 'A new session has begun with Guarded (guarded).'));
      server.llm.script({ toolCalls: [{ name: 'mark', arguments: { label: 'door' } }] }, { content: 'Not marked.' });
      api.sendText(ada, 'mark the door', { firstName: 'Ada' });
      const approval = await waitUntil(() => api.botMessages(ada).find((message) => message.replyMarkup?.inline_keyboard));
      expect(approval.text).toContain('door');
      const deny = approval.replyMarkup!.inline_keyboard!.flat().find((button) => button.text === 'Deny')!;
      api.pressButton(ada, approval.message_id, deny.callback_data!, { firstName: 'Ada' });
      await waitUntil(() => api.botMessages(ada).find((message) => message.message_id === approval.message_id)!.text.endsWith('Denied by Ada'));
      await waitUntil(() => api.botMessages(ada).at(-1)?.text === 'Not marked.');
      expect(runs).toEqual([]);
    });

    it('keeps a document in the session\'s files', async () => {
      const { server, api } = await start(backend);
      server.llm.script({ content: 'Got it.' });
      api.sendDocument(ada, { bytes: Buffer.from('hello notes'), fileName: 'notes.txt', mimeType: 'text/plain', caption: 'keep this' });
      await waitUntil(() => api.botMessages(ada).at(-1)?.text === 'Got it.');
      const folders = await readdir(path.join(dataDir!, 'session-files'));
      expect(folders).toHaveLength(1);
      expect(await readFile(path.join(dataDir!, 'session-files', folders[0]!, 'notes.txt'), 'utf8')).toBe('hello notes');
    });
  });
}
