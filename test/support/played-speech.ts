import type { ChannelSpeech } from '../../src/channels/channel.ts';
import type { AudioClip, Synthesis, SynthesizeOptions, Transcription } from '../../src/speech/speech-types.ts';

/**
 * Hearth's speech as a channel sees it, played by a test: off until told otherwise, each
 * transcription the next scripted answer, each synthesis some bytes that look like OGG/Opus to Telegram (`OggS`, `OpusHead`) and name the text. It records
 * every clip it was given and every text it was asked to say.
 */
export class PlayedSpeech implements ChannelSpeech {
  canTranscribe = false;
  canSynthesize = false;
  readonly heard: AudioClip[] = [];
  readonly said: Array<{ text: string; options: SynthesizeOptions }> = [];
  /** What the next transcriptions give, in order; a transcription with none left fails as `speech_failed`. */
  readonly transcriptions: Transcription[] = [];
  /** What the next syntheses give, when set; otherwise `OggS OpusHead` and the text. */
  readonly syntheses: Synthesis[] = [];

  constructor(options: { listens?: boolean; speaks?: boolean } = {}) {
    this.canTranscribe = options.listens ?? false;
    this.canSynthesize = options.speaks ?? false;
  }

  async transcribe(clip: AudioClip): Promise<Transcription> {
    this.heard.push(clip);
    if (!this.canTranscribe) return { success: false, code: 'stt_not_configured', message: 'No speech-to-text is configured.' };
    return this.transcriptions.shift() ?? { success: false, code: 'speech_failed', message: 'nothing scripted' };
  }

  async synthesize(text: string, options: SynthesizeOptions): Promise<Synthesis> {
    this.said.push({ text, options });
    if (!this.canSynthesize) return { success: false, code: 'tts_not_configured', message: 'No text-to-speech is configured.' };
    return this.syntheses.shift() ?? { success: true, audio: { bytes: Buffer.from(`OggS OpusHead ${text}`), mimeType: 'audio/ogg' }, seconds: 2.4 };
  }
}
