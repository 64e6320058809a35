import { TelegramChannel, type TelegramChannelOptions } from '../../src/channels/telegram/telegram-channel.ts';
import type { TelegramBotApi } from './telegram-bot-api.ts';

/** The Telegram channel against the stand-in for one allowed user, editing fast enough for a test. */
export function telegramChannelFor(api: TelegramBotApi, allowedUser: number, overrides: Partial<TelegramChannelOptions> = {}): TelegramChannel {
  return new TelegramChannel({
    token: api.token,
    allowedUsers: String(allowedUser),
    apiRoot: api.apiRoot,
    editIntervalMs: 50,
    pollTimeoutSeconds: 5,
    ...overrides,
  });
}
