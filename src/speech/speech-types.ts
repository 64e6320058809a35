/** What a clip is: the formats Hearth reads and writes. */
export type AudioFormat = 'wav' | 'mp3' | 'ogg_opus' | 'webm' | 'pcm16';

/** A piece of audio with its media type, e.g. audio/webm;codecs=opus, audio/ogg, audio/wav, audio/mpeg. */
export interface AudioClip {
  bytes: Buffer;
  mimeType: string;
}

export type SpeechErrorCode =
  | 'stt_not_configured'
  | 'tts_not_configured'
  | 'speech_unreachable'
  | 'speech_failed'
  | 'audio_unreadable'
  | 'audio_too_long'
  | 'audio_too_large'
  | 'no_speech';

/** A failure of speech, as data: the code for the client and the cause in words a person can act on. */
export type SpeechFailure = { success: false; code: SpeechErrorCode; message: string };

export type Transcription = { success: true; text: string; language?: string; seconds: number } | SpeechFailure;

export type Synthesis = { success: true; audio: AudioClip; seconds?: number } | SpeechFailure;

/** The formats a synthesis can be asked for. */
export type SpeechFormat = 'mp3' | 'ogg_opus' | 'wav';

/** How a speech backend is doing, for the IntegrationRegistry: `failed` carries the fix in words. */
export interface SpeechStatus {
  state: 'connected' | 'failed' | 'not_configured';
  /** Why it failed or is not configured, in words a person can act on. */
  message?: string;
  /** What it is, e.g. `{backend: 'wyoming', url: 'tcp://host:10300'}`; never a key. */
  details: Record<string, unknown>;
}

export interface TranscribeOptions {
  signal?: AbortSignal;
  language?: string;
}

export interface SynthesizeOptions {
  voice?: string;
  format: SpeechFormat;
  signal?: AbortSignal;
}

export interface SpeechToText {
  readonly id: string;
  transcribe(clip: AudioClip, options: TranscribeOptions): Promise<Transcription>;
  status(): Promise<SpeechStatus>;
}

export interface TextToSpeech {
  readonly id: string;
  synthesize(text: string, options: SynthesizeOptions): Promise<Synthesis>;
  status(): Promise<SpeechStatus>;
  /** Ends what it keeps running. */
  close?(): void;
}

/** The media type each synthesis format is sent with. */
export const speechMimeTypes: Record<SpeechFormat, string> = {
  mp3: 'audio/mpeg',
  ogg_opus: 'audio/ogg',
  wav: 'audio/wav',
};

export function speechFailure(code: SpeechErrorCode, message: string): SpeechFailure {
  return { success: false, code, message };
}
