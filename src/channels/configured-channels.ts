import type { Config } from '../config.ts';
import type { Channel } from './channel.ts';

/**
 * The channels the configuration turns on. Each is loaded only when configured (a dynamic
 * import), so a server without TELEGRAM_BOT_TOKEN never loads grammY nor the channel's code.
 */
export async function configuredChannels(config: Config): Promise<Channel[]> {
  const channels: Channel[] = [];
  if (config.TELEGRAM_BOT_TOKEN !== '') {
    const { TelegramChannel } = await import('./telegram/telegram-channel.ts');
    channels.push(
      new TelegramChannel({
        token: config.TELEGRAM_BOT_TOKEN,
        allowedUsers: config.TELEGRAM_ALLOWED_USERS,
        apiRoot: config.TELEGRAM_API_ROOT,
        // Bots may fetch files of up to 20 MB; a smaller upload limit is Hearth's.
        voiceLimits: { maxSeconds: config.VOICE_MAX_SECONDS, maxBytes: Math.min(20, config.SESSION_FILES_MAX_SIZE_MB) * 1024 * 1024 },
      }),
    );
  }
  return channels;
}
