import type { Jail } from '../jail/jail.ts';
import { ReadyJailedFilter, type FilterResult } from '../jail/jailed-filter.ts';
import { installedProgram } from './installed-program.ts';
import { speechFailure, speechMimeTypes, type AudioClip, type SpeechFailure, type SpeechFormat } from './speech-types.ts';
import { pcmSeconds, speechPcm, wavFromPcm, type PcmFormat } from './wav.ts';

export interface AudioConverterOptions {
  jail: Jail;
  /** The ffmpeg to run (Debian's by default, found on PATH). */
  ffmpeg?: string;
  /** How long one conversion may take. */
  timeoutMs?: number;
}

export type Decoded = { success: true; pcm: Buffer; seconds: number } | SpeechFailure;
export type Encoded = { success: true; audio: AudioClip; seconds?: number } | SpeechFailure;

const defaultTimeoutMs = 30_000;
/** A clip's decoded PCM is read up to this much past the limit, so a longer one is known as longer without decoding it all. */
const overLimitSeconds = 0.5;
/** What a spoken answer is encoded to when asked for WAV: mono 24 kHz, enough for a voice. */
const spokenWav: PcmFormat = { rate: 24_000, width: 2, channels: 1 };
const quiet = ['-hide_banner', '-nostdin', '-loglevel', 'error'];
const encoders: Record<Exclude<SpeechFormat, 'wav'>, string[]> = {
  mp3: ['-ac', '1', '-c:a', 'libmp3lame', '-b:a', '64k', '-f', 'mp3'],
  // What Telegram plays as a voice note: Opus in Ogg, 48 kHz mono.
  ogg_opus: ['-ac', '1', '-ar', '48000', '-c:a', 'libopus', '-b:a', '32k', '-application', 'voip', '-f', 'ogg'],
};

/**
 * ffmpeg (Debian's) on audio a person or a server sent: decoded to the 16 kHz mono PCM speech
 * servers take (and so measured), or encoded to MP3, OGG/Opus or WAV. It runs in the strict jail
 * without network when the jail is on: the audio is untrusted, and a decoder is a large surface.
 */
export class AudioConverter {
  private readonly jail: Jail;
  private readonly ffmpeg: string;
  private readonly timeoutMs: number;
  private readonly decoders = new Map<number, ReadyJailedFilter>();
  private readonly encoders = new Map<SpeechFormat, ReadyJailedFilter>();

  constructor(options: AudioConverterOptions) {
    this.jail = options.jail;
    this.ffmpeg = options.ffmpeg ?? 'ffmpeg';
    this.timeoutMs = options.timeoutMs ?? defaultTimeoutMs;
  }

  /** Whether ffmpeg is there to run. */
  get installed(): boolean {
    return installedProgram(this.ffmpeg);
  }

  /** Why no audio can be converted, with the fix; undefined when it can. */
  problem(): string | undefined {
    if (!this.installed) return 'ffmpeg is not installed, and Hearth converts audio with it: apt install ffmpeg.';
    return this.jail.refusal('Audio conversion (ffmpeg)');
  }

  /**
   * The clip as 16 kHz mono s16le PCM with its length; a clip longer than `maxSeconds` is refused
   * as `audio_too_long` (only a little more than the limit is ever decoded), one ffmpeg cannot read
   * as `audio_unreadable` with ffmpeg's reason.
   */
  async toSpeechPcm(clip: AudioClip, options: { maxSeconds: number; signal?: AbortSignal }): Promise<Decoded> {
    const result = await this.decoder(options.maxSeconds).run(clip.bytes, options.signal);
    if (!result.ok) return this.failure(result, 'read');
    const pcm = result.output.subarray(0, result.output.length - (result.output.length % speechPcm.width));
    if (pcm.length === 0) return speechFailure('audio_unreadable', 'The audio could not be read: it holds no sound (no audio stream, or nothing in it).');
    const seconds = pcmSeconds(pcm.length, speechPcm);
    if (seconds > options.maxSeconds) {
      return speechFailure('audio_too_long', `The recording is longer than ${options.maxSeconds} s (VOICE_MAX_SECONDS); send a shorter one.`);
    }
    return { success: true, pcm, seconds };
  }

  /** The clip encoded as MP3, OGG/Opus or WAV (mono). */
  async encode(clip: AudioClip, format: SpeechFormat, options: { signal?: AbortSignal } = {}): Promise<Encoded> {
    const result = await this.encoder(format).run(clip.bytes, options.signal);
    if (!result.ok) return this.failure(result, 'encode');
    if (format === 'wav') {
      return { success: true, audio: { bytes: wavFromPcm(result.output, spokenWav), mimeType: speechMimeTypes.wav }, seconds: pcmSeconds(result.output.length, spokenWav) };
    }
    if (result.output.length === 0) return speechFailure('audio_unreadable', 'The audio could not be encoded: it holds no sound.');
    return { success: true, audio: { bytes: result.output, mimeType: speechMimeTypes[format] } };
  }

  /** Starts the decoder of recordings ahead, so the first one does not wait for ffmpeg to load. */
  prepare(maxSeconds: number): void {
    this.decoder(maxSeconds).prepare();
  }

  /** Ends the decoders and encoders kept waiting. */
  close(): void {
    for (const ready of [...this.decoders.values(), ...this.encoders.values()]) ready.close();
    this.decoders.clear();
    this.encoders.clear();
  }

  /** The ffmpeg that encodes speech to a format, kept started ahead after the format's first use. */
  private encoder(format: SpeechFormat): ReadyJailedFilter {
    const known = this.encoders.get(format);
    if (known) return known;
    const output = format === 'wav' ? ['-ac', '1', '-ar', String(spokenWav.rate), '-c:a', 'pcm_s16le', '-f', 's16le'] : encoders[format];
    const encoder = new ReadyJailedFilter({ executable: this.ffmpeg, args: [...quiet, '-i', 'pipe:0', '-vn', ...output, 'pipe:1'], jail: this.jail, timeoutMs: this.timeoutMs, maxOutputBytes });
    this.encoders.set(format, encoder);
    return encoder;
  }

  /** The ffmpeg that decodes a recording to speech PCM, kept started ahead (one per limit; there is one limit, VOICE_MAX_SECONDS). */
  private decoder(maxSeconds: number): ReadyJailedFilter {
    const known = this.decoders.get(maxSeconds);
    if (known) return known;
    const maxBytes = Math.ceil((maxSeconds + overLimitSeconds) * speechPcm.rate) * speechPcm.width;
    const args = [...quiet, '-i', 'pipe:0', '-t', String(maxSeconds + overLimitSeconds), '-vn', '-ac', '1', '-ar', String(speechPcm.rate), '-c:a', 'pcm_s16le', '-f', 's16le', 'pipe:1'];
    const decoder = new ReadyJailedFilter({ executable: this.ffmpeg, args, jail: this.jail, timeoutMs: this.timeoutMs, maxOutputBytes: maxBytes + speechPcm.width });
    this.decoders.set(maxSeconds, decoder);
    return decoder;
  }


  private failure(result: Exclude<FilterResult, { ok: true }>, doing: 'read' | 'encode'): SpeechFailure {
    switch (result.reason) {
      case 'not_started':
        // The jail's refusal carries its own fix; a missing program is the one other cause.
        return /ENOENT/.test(result.message ?? '')
          ? speechFailure('speech_failed', 'ffmpeg is not installed, and Hearth converts audio with it: apt install ffmpeg.')
          : speechFailure('speech_failed', `Audio conversion could not start: ${result.message ?? 'no reason given'}`);
      case 'timeout':
        return speechFailure('speech_failed', `ffmpeg took longer than ${this.timeoutMs / 1000} s to ${doing} the audio and was stopped.`);
      case 'aborted':
        return speechFailure('speech_failed', 'Stopped before the audio was converted.');
      case 'output_too_large':
        return speechFailure('audio_too_large', 'The audio decodes to more than Hearth takes.');
      case 'failed': {
        const reason = ffmpegReason(result.stderr);
        if (/execvp/.test(result.stderr)) return speechFailure('speech_failed', `ffmpeg could not start: ${reason}. Install it with apt install ffmpeg.`);
        return doing === 'read'
          ? speechFailure('audio_unreadable', `The audio could not be read (ffmpeg: ${reason}). Send WAV, MP3, OGG/Opus, WebM or M4A audio.`)
          : speechFailure('speech_failed', `ffmpeg could not encode the audio: ${reason}.`);
      }
    }
  }
}

/** Encoded audio larger than this is refused: a few minutes of speech are a few MB at most. */
const maxOutputBytes = 64 * 1024 * 1024;

/** ffmpeg's own words, without the `pipe:0:` it names the input by. */
export function ffmpegReason(stderr: string): string {
  const lines = stderr
    .split('\n')
    .map((line) => line.trim().replace(/^\[[^\]]*\]\s*/, '').replace(/^pipe:\d:\s*/, ''))
    .filter((line) => line !== '' && !/^Error opening input files?/i.test(line) && !/^Error opening input file pipe/i.test(line));
  return lines.at(-1) ?? lines[0] ?? 'no reason given';
}
