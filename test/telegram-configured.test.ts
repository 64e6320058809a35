import { afterEach, describe, expect, it } from 'vitest';
import { type Hearth, useHearth } from './support/hearth-server.ts';
import { recordingLogger } from './support/recording-logger.ts';
import { startTelegramBotApi, type TelegramBotApi } from './support/telegram-bot-api.ts';
import { waitUntil } from './support/wait-until.ts';

// The Telegram channel as the configuration turns it on: TELEGRAM_BOT_TOKEN, TELEGRAM_ALLOWED_USERS, TELEGRAM_API_ROOT.

const ada = 7_200_001;
let api: TelegramBotApi | undefined;

afterEach(async () => {
  await api?.close();
  api = undefined;
});
// Registered after the hook above, so the app is closed before what it uses is removed (hooks run last-registered first).
const startApp = useHearth();

async function start(envFor: (api: TelegramBotApi) => Record<string, string>) {
  api = await startTelegramBotApi();
  const recorded = recordingLogger();
  const hearth = await startApp({ env: { TELEGRAM_API_ROOT: api.apiRoot, ...envFor(api) }, logger: recorded.logger });
  return { server: hearth, api, lines: recorded.lines };
}

async function telegramStatus(server: Hearth) {
  const { body } = await server.request('GET', '/integrations');
  return (body.integrations as Array<{ name: string; status: string; message?: string; details: Record<string, unknown> }>).find((status) => status.name === 'telegram');
}

describe('Telegram from the configuration', () => {
  it('is not registered without TELEGRAM_BOT_TOKEN', async () => {
    const { server, api } = await start(() => ({}));
    expect(server.app.channels.list()).toEqual([]);
    expect(await telegramStatus(server)).toBeUndefined();
    expect(api.calls).toEqual([]);
  });

  it('with a token and allowed users: connects, answers, and the token is in no log line nor status', async () => {
    const { server, api, lines } = await start((api) => ({ TELEGRAM_BOT_TOKEN: api.token, TELEGRAM_ALLOWED_USERS: String(ada) }));
    await waitUntil(async () => (await telegramStatus(server))?.status === 'connected');
    expect(api.commands.map((command) => command.command)).toEqual(['new', 'stop', 'profile', 'sessions', 'help']);
    expect(api.callsOf('deleteWebhook')).toHaveLength(1);
    server.llm.script({ content: 'Hello Ada.' });
    api.sendText(ada, 'Hi', { firstName: 'Ada' });
    await waitUntil(() => api.botMessages(ada).at(-1)?.text === 'Hello Ada.');
    const { body } = await server.request('GET', '/integrations');
    expect(JSON.stringify(body)).not.toContain(api.token.split(':')[1]);
    expect(lines.length).toBeGreaterThan(0);
    expect(lines.join('')).not.toContain(api.token.split(':')[1]);
  });

  it('without TELEGRAM_ALLOWED_USERS it does not start, and says why', async () => {
    api = await startTelegramBotApi();
    const hearth = await startApp({ env: { TELEGRAM_API_ROOT: api.apiRoot, TELEGRAM_BOT_TOKEN: api.token } });
    const status = await waitUntil(() => telegramStatus(hearth!));
    expect(status.status).toBe('failed');
    expect(status.message).toContain('TELEGRAM_ALLOWED_USERS');
    expect(api.calls).toEqual([]);
  });

  it('a refused token is failed with the reason and a retry later; the token is nowhere', async () => {
    api = await startTelegramBotApi();
    const wrong = '123456789:AAwrongwrongwrongwrongwrongwrongwron';
    const recorded = recordingLogger();
    const hearth = await startApp({ env: { TELEGRAM_API_ROOT: api.apiRoot, TELEGRAM_BOT_TOKEN: wrong, TELEGRAM_ALLOWED_USERS: String(ada) }, logger: recorded.logger });
    const status = await waitUntil(async () => {
      const current = await telegramStatus(hearth!);
      return current?.status === 'failed' && current;
    });
    expect(status.message).toContain('401');
    expect(Date.parse(String(status.details.retry_at))).toBeGreaterThan(Date.now());
    expect(JSON.stringify(status)).not.toContain('AAwrong');
    expect(recorded.lines.join('')).toContain('401');
    expect(recorded.lines.join('')).not.toContain('AAwrong');
    // Backing off: not a call a moment.
    const getMeCalls = api.callsOf('getMe').length;
    expect(getMeCalls).toBeLessThanOrEqual(2);
  });

  it('an outage is failed with the reason, and it comes back by itself', async () => {
    api = await startTelegramBotApi();
    const recorded = recordingLogger();
    const hearth = await startApp({ env: { TELEGRAM_API_ROOT: api.apiRoot, TELEGRAM_BOT_TOKEN: api.token, TELEGRAM_ALLOWED_USERS: String(ada) }, logger: recorded.logger });
    await waitUntil(async () => (await telegramStatus(hearth!))?.status === 'connected');
    api.setDown(true);
    const failed = await waitUntil(async () => {
      const current = await telegramStatus(hearth!);
      return current?.status === 'failed' && current;
    });
    expect(failed.message).toBeTruthy();
    expect(failed.details.retry_at).toBeTruthy();
    api.setDown(false);
    await waitUntil(async () => (await telegramStatus(hearth!))?.status === 'connected', 15_000);
    expect(JSON.stringify(failed)).not.toContain(api.token.split(':')[1]);
    expect(recorded.lines.join('')).not.toContain(api.token.split(':')[1]);
  });
});
