import { Composer } from 'grammy';
import { chatPersonOf, type TelegramContext } from './chat-people.ts';
import { receivedFiles, type Download } from './downloads.ts';
import { forwardedFrom } from './forwarded-from.ts';
import type { ReceivedFile, TelegramSessions } from './telegram-port.ts';

export interface MessagesOptions {
  sessions: Pick<TelegramSessions, 'sessionForChat' | 'send'>;
  /** Mirrors the chat's session into the chat. */
  follow: (sessionId: string, chatId: number) => void;
  download: Download;
  /** Logs a failed download and says why in a line for the person, without the token. */
  downloadFailed: (error: unknown) => string;
}

/** A message that is no command (text, a photo, a document, a voice note) starts a turn in the chat's session. */
export function messages({ sessions, follow, download, downloadFailed }: MessagesOptions): Composer<TelegramContext> {
  const composer = new Composer<TelegramContext>();
  composer.on('message', async (context) => {
    const { message } = context;
    const chatId = context.chat.id;
    const chat = chatPersonOf(context);
    const sessionId = await sessions.sessionForChat(chatId, chat);
    follow(sessionId, chatId);
    let files: ReceivedFile[];
    try {
      files = await receivedFiles(message, download);
    } catch (error) {
      return void (await context.reply(`That file could not be fetched from Telegram: ${downloadFailed(error)}`));
    }
    const text = message.text ?? message.caption ?? '';
    if (text === '' && files.length === 0) return;
    // The chat's person asks, also in a session someone shared with them.
    const sent = await sessions.send(sessionId, text, files, forwardedFrom(message), chat.person.id);
    if (!sent.ok) await context.reply(sent.reason);
  });
  return composer;
}
