import { InputFile, type Api } from 'grammy';
import type { ChannelSpeech } from '../channel.ts';
import { spokenText } from './spoken-text.ts';

export type VoiceApi = Pick<Api, 'sendVoice' | 'sendMessage' | 'sendChatAction'>;

export interface SpokenAnswersOptions {
  api: VoiceApi;
  speech: Pick<ChannelSpeech, 'synthesize'>;
  onFailure: (what: string, error: unknown) => void;
}

interface Awaited {
  chatId: number;
  /** The person's voice note, which the spoken answer replies to. */
  replyTo: number;
}

/**
 * Answers spoken back to whoever spoke: when a person's voice note started a run, the run's
 * finished answer is also synthesized as OGG/Opus and sent with `sendVoice` in reply to the note,
 * once the text is shown (the text stays beside it). Only what `spokenText` keeps of it is said;
 * a synthesis that fails is a line in the chat, a failed upload a line in the log.
 */
export class SpokenAnswers {
  private readonly awaited = new Map<string, Awaited>();
  private closed = false;

  constructor(private readonly options: SpokenAnswersOptions) {}

  /** The next answer of the session, in `chatId`, is spoken in reply to the voice note `replyTo`. */
  expect(sessionId: string, chatId: number, replyTo: number): void {
    this.awaited.set(sessionId, { chatId, replyTo });
  }

  /** The run ended without an answer to speak (stopped, failed): nothing is spoken for it. */
  drop(sessionId: string): void {
    this.awaited.delete(sessionId);
  }

  /** The run's answer, `markdown`, is being shown in `chatId`; `shown` settles once it is. Resolves once the voice note is sent, or was not. */
  async answered(sessionId: string, chatId: number, markdown: string, shown: Promise<void>): Promise<void> {
    const awaited = this.awaited.get(sessionId);
    this.awaited.delete(sessionId);
    if (!awaited || awaited.chatId !== chatId || this.closed) return;
    const text = spokenText(markdown);
    if (text === '') return;
    const { api, speech, onFailure } = this.options;
    api.sendChatAction(chatId, 'record_voice').catch(() => undefined);
    const [synthesis] = await Promise.all([speech.synthesize(text, { format: 'ogg_opus' }), shown]);
    if (this.closed) return;
    const reply_parameters = { message_id: awaited.replyTo, allow_sending_without_reply: true };
    try {
      if (!synthesis.success) {
        await api.sendMessage(chatId, `🔇 No spoken answer: ${synthesis.message}`, { reply_parameters });
        return;
      }
      const duration = synthesis.seconds !== undefined ? Math.max(1, Math.round(synthesis.seconds)) : undefined;
      await api.sendVoice(chatId, new InputFile(synthesis.audio.bytes, 'answer.ogg'), { reply_parameters, ...(duration !== undefined && { duration }) });
    } catch (error) {
      onFailure('spoken answer not sent', error);
    }
  }

  close(): void {
    this.closed = true;
    this.awaited.clear();
  }
}
