import type { Message } from 'grammy/types';
import type { ChannelSpeech } from '../channel.ts';
import type { Download } from './downloads.ts';

/** A voice note or an audio file a person sent, as Telegram describes it before it is fetched. */
export interface Recording {
  fileId: string;
  mimeType: string;
  /** Its length as Telegram says it, in seconds. */
  seconds: number;
  /** Its size as Telegram says it, when it does. */
  bytes?: number;
}

/** The longest and largest recording Hearth takes (VOICE_MAX_SECONDS, SESSION_FILES_MAX_SIZE_MB). */
export interface VoiceLimits {
  maxSeconds: number;
  maxBytes: number;
}

export const defaultVoiceLimits: VoiceLimits = { maxSeconds: 120, maxBytes: 20 * 1024 * 1024 };

export type Heard = { ok: true; text: string } | { ok: false; reason: string };

export const notListeningReason =
  'I can\'t listen to voice notes yet: set STT_BACKEND (wyoming or openai) and STT_URL in Hearth\'s configuration and restart it (docs/integrations.md, "Voice"). Your voice note is kept in the session\'s files.';

/** The recording a message carries: a voice note (`voice`, OGG/Opus) or an audio file (`audio`). */
export function recordingOf(message: Message): Recording | undefined {
  const media = message.voice ?? message.audio;
  if (!media) return undefined;
  const mimeType = media.mime_type ?? (message.voice ? 'audio/ogg' : 'application/octet-stream');
  return { fileId: media.file_id, mimeType, seconds: media.duration, ...(media.file_size !== undefined && { bytes: media.file_size }) };
}

export interface ListenOptions {
  speech: Pick<ChannelSpeech, 'transcribe'>;
  download: Download;
  /** Logs a failed download and says why in a line for the person, without the token. */
  downloadFailed: (error: unknown) => string;
  limits: VoiceLimits;
}

/**
 * The words of a recording: refused by what Telegram says of its length and size before anything
 * is fetched, then downloaded and transcribed. Every failure is a line for the person.
 */
export async function listen(recording: Recording, { speech, download, downloadFailed, limits }: ListenOptions): Promise<Heard> {
  if (recording.seconds > limits.maxSeconds) {
    return { ok: false, reason: `That recording is ${clock(recording.seconds)} long; Hearth listens to at most ${clock(limits.maxSeconds)} (VOICE_MAX_SECONDS).` };
  }
  const tooLarge = { ok: false as const, reason: `That recording is larger than the ${megabytes(limits.maxBytes)} Hearth takes (SESSION_FILES_MAX_SIZE_MB, and 20 MB for what bots may fetch).` };
  if ((recording.bytes ?? 0) > limits.maxBytes) return tooLarge;
  let bytes: Buffer;
  try {
    bytes = await download(recording.fileId);
  } catch (error) {
    return { ok: false, reason: `That voice note could not be fetched from Telegram: ${downloadFailed(error)}` };
  }
  if (bytes.length > limits.maxBytes) return tooLarge;
  const heard = await speech.transcribe({ bytes, mimeType: recording.mimeType }, {});
  if (heard.success) {
    const text = heard.text.trim();
    return text === '' ? { ok: false, reason: 'I heard no words in that voice note.' } : { ok: true, text };
  }
  if (heard.code === 'no_speech') return { ok: false, reason: 'I heard no words in that voice note.' };
  return { ok: false, reason: `I couldn't listen to that voice note: ${heard.message}` };
}

function clock(seconds: number): string {
  const whole = Math.ceil(seconds);
  return `${Math.floor(whole / 60)}:${String(whole % 60).padStart(2, '0')}`;
}

function megabytes(bytes: number): string {
  const mebibyte = 1024 * 1024;
  return bytes < mebibyte ? `${Math.floor(bytes / 1024)} KB` : `${Math.round((bytes / mebibyte) * 10) / 10} MB`;
}
