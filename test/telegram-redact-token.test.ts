import { Bot, GrammyError, HttpError } from 'grammy';
import { afterEach, describe, expect, it } from 'vitest';
import { describeTelegramFailure, redactToken } from '../src/channels/telegram/redact-token.ts';
import { startTelegramBotApi, type TelegramBotApi } from './support/telegram-bot-api.ts';

const token = '123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw1';
let api: TelegramBotApi | undefined;

afterEach(async () => {
  await api?.close();
  api = undefined;
});

describe('redactToken', () => {
  it('takes the token out of URLs and text, and anything shaped like one', () => {
    expect(redactToken(`request to https://api.telegram.org/bot${token}/getMe failed`, token)).toBe('request to https://api.telegram.org/bot<token>/getMe failed');
    expect(redactToken(`/bot${encodeURIComponent(token)}/x`, token)).toBe('/bot<token>/x');
    expect(redactToken('other 987654321:ZZHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw9 here', token)).toBe('other <token> here');
    expect(redactToken('nothing secret', '')).toBe('nothing secret');
  });
});

describe('describeTelegramFailure', () => {
  it('says a refused token is the token, without it', async () => {
    api = await startTelegramBotApi();
    const wrong = `${api.bot.id}:${'x'.repeat(35)}`;
    const error = await new Bot(wrong, { client: { apiRoot: api.apiRoot } }).api.getMe().catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(GrammyError);
    const reason = describeTelegramFailure(error, wrong);
    expect(reason).toMatch(/401 Unauthorized.*TELEGRAM_BOT_TOKEN/);
    expect(reason).not.toContain(wrong);
  });

  it('gives the network cause of an unreachable API, without the token in its URL', async () => {
    api = await startTelegramBotApi({ token });
    const root = api.apiRoot;
    await api.close();
    api = undefined;
    const error = await new Bot(token, { client: { apiRoot: root } }).api.getMe().catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(HttpError);
    expect(String(((error as HttpError).error as Error).message)).toContain(token);
    const reason = describeTelegramFailure(error, token);
    expect(reason).toMatch(/^Cannot reach the Telegram Bot API: .*ECONNREFUSED/);
    expect(reason).not.toContain(token);
    expect(reason).toContain('bot<token>/getMe');
  });
});
