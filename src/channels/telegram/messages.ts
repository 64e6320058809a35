import { Composer } from 'grammy';
import type { ChannelSpeech } from '../channel.ts';
import { chatPersonOf, type TelegramContext } from './chat-people.ts';
import { receivedFiles, type Download } from './downloads.ts';
import { forwardedFrom } from './forwarded-from.ts';
import { escapeHtml } from './render-html.ts';
import type { SpokenAnswers } from './spoken-answers.ts';
import type { ReceivedFile, TelegramSessions } from './telegram-port.ts';
import { listen, notListeningReason, recordingOf, type VoiceLimits } from './voice-notes.ts';

export interface MessagesOptions {
  sessions: Pick<TelegramSessions, 'sessionForChat' | 'send'>;
  /** Mirrors the chat's session into the chat. */
  follow: (sessionId: string, chatId: number) => void;
  download: Download;
  /** Logs a failed download and says why in a line for the person, without the token. */
  downloadFailed: (error: unknown) => string;
  speech: Pick<ChannelSpeech, 'canTranscribe' | 'canSynthesize' | 'transcribe'>;
  /** Where a run started by a voice note is marked to have its answer spoken. */
  spoken: Pick<SpokenAnswers, 'expect'>;
  voiceLimits: VoiceLimits;
}

// The most of a transcript shown back to the person; the whole of it is their message.
const shownTranscriptLimit = 1_000;

/**
 * A message that is no command starts a turn in the chat's session: text, a photo, a document, or
 * a voice note or audio file, which is transcribed and sent as the person's words (shown back to
 * them as "🎤 …" in reply to it), its answer spoken as well as written. Without speech to text a
 * recording is kept in the session's files, as any file, and the person is told why it was not heard.
 */
export function messages(options: MessagesOptions): Composer<TelegramContext> {
  const { sessions, follow, download, downloadFailed, speech, spoken, voiceLimits } = options;
  const composer = new Composer<TelegramContext>();
  composer.on('message', async (context) => {
    const { message } = context;
    const chatId = context.chat.id;
    const chat = chatPersonOf(context);
    const sessionId = await sessions.sessionForChat(chatId, chat);
    follow(sessionId, chatId);
    const recording = recordingOf(message);
    const replyToIt = { reply_parameters: { message_id: message.message_id, allow_sending_without_reply: true } };
    if (recording && speech.canTranscribe) {
      await context.replyWithChatAction('typing').catch(() => undefined);
      const heard = await listen(recording, { speech, download, downloadFailed, limits: voiceLimits });
      if (!heard.ok) return void (await context.reply(heard.reason, replyToIt));
      const shown = heard.text.length > shownTranscriptLimit ? `${heard.text.slice(0, shownTranscriptLimit - 1)}…` : heard.text;
      await context.reply(`🎤 <i>${escapeHtml(shown)}</i>`, { parse_mode: 'HTML', ...replyToIt });
      const caption = message.caption?.trim() ?? '';
      const words = caption === '' ? heard.text : `${caption}\n\n${heard.text}`;
      const sent = await sessions.send(sessionId, words, [], forwardedFrom(message), chat.person.id);
      if (!sent.ok) return void (await context.reply(sent.reason));
      if (speech.canSynthesize) spoken.expect(sessionId, chatId, message.message_id);
      return;
    }
    let files: ReceivedFile[];
    try {
      files = await receivedFiles(message, download);
    } catch (error) {
      return void (await context.reply(`That file could not be fetched from Telegram: ${downloadFailed(error)}`));
    }
    if (recording) await context.reply(notListeningReason, replyToIt);
    const text = message.text ?? message.caption ?? '';
    if (text === '' && files.length === 0) return;
    // The chat's person asks, also in a session someone shared with them.
    const sent = await sessions.send(sessionId, text, files, forwardedFrom(message), chat.person.id);
    if (!sent.ok) await context.reply(sent.reason);
  });
  return composer;
}
