import type { Jail } from '../jail/jail.ts';
import type { AudioConverter } from './audio-convert.ts';
import { ReadyJailedFilter } from '../jail/jailed-filter.ts';
import { installedProgram } from './installed-program.ts';
import { speechFailure, type SpeechStatus, type Synthesis, type SynthesizeOptions, type TextToSpeech } from './speech-types.ts';

export interface EspeakOptions {
  jail: Jail;
  converter: AudioConverter;
  /** The voice when a call names none (TTS_VOICE); '' is espeak-ng's default. */
  voice: string;
  /** The espeak-ng to run (Debian's by default, found on PATH). */
  program?: string;
  timeoutMs?: number;
}

/** espeak-ng's voice names: a language code and variants such as `en-us`, `de`, `en+f3`, `mb-en1`. */
const voicePattern = /^[A-Za-z0-9][A-Za-z0-9_+.-]{0,63}$/;
const defaultTimeoutMs = 30_000;
const maxWavBytes = 64 * 1024 * 1024;
const keptVoices = 3;

/**
 * TTS_BACKEND=espeak-ng: Debian's espeak-ng, local and light, writes WAV (`--stdout`, the text on
 * its stdin, never an argument) which ffmpeg turns into the asked format. Both run in the strict
 * jail without network when the jail is on.
 */
export class EspeakTextToSpeech implements TextToSpeech {
  readonly id = 'espeak-ng';
  private readonly program: string;
  private readonly speakers = new Map<string, ReadyJailedFilter>();

  constructor(private readonly options: EspeakOptions) {
    this.program = options.program ?? 'espeak-ng';
  }

  /** Whether espeak-ng is installed, for TTS_BACKEND=auto. */
  static installed(program = 'espeak-ng'): boolean {
    return installedProgram(program);
  }

  async synthesize(text: string, options: SynthesizeOptions): Promise<Synthesis> {
    const voice = options.voice || this.options.voice;
    if (voice !== '' && !voicePattern.test(voice)) return speechFailure('speech_failed', `"${voice}" is not an espeak-ng voice name (e.g. en-us, de, en+f3; espeak-ng --voices lists them).`);
    const spoken = await this.speaker(voice).run(Buffer.from(text, 'utf8'), options.signal);
    if (!spoken.ok) {
      if (spoken.reason === 'aborted') return speechFailure('speech_failed', 'Stopped before the speech was made.');
      const reason = spoken.message ?? (spoken.stderr.trim() || `it ended with ${spoken.reason}`);
      if (/voice does not exist/i.test(spoken.stderr)) return speechFailure('speech_failed', `espeak-ng has no voice "${voice}" (espeak-ng --voices lists them; set TTS_VOICE).`);
      return speechFailure('speech_failed', `espeak-ng could not speak the text: ${reason.slice(0, 300)}`);
    }
    const encoded = await this.options.converter.encode({ bytes: spoken.output, mimeType: 'audio/wav' }, options.format, options.signal ? { signal: options.signal } : {});
    if (!encoded.success) return encoded;
    return { success: true, audio: encoded.audio, seconds: encoded.seconds ?? wavSeconds(spoken.output) };
  }

  /** Ends the espeak-ng processes kept waiting. */
  close(): void {
    for (const speaker of this.speakers.values()) speaker.close();
    this.speakers.clear();
  }

  /** espeak-ng for one voice, kept started ahead after its first use (loading it is most of a short sentence's time). */
  private speaker(voice: string): ReadyJailedFilter {
    const known = this.speakers.get(voice);
    if (known) return known;
    const speaker = new ReadyJailedFilter({
      executable: this.program,
      args: ['--stdout', '--stdin', ...(voice === '' ? [] : ['-v', voice])],
      jail: this.options.jail,
      timeoutMs: this.options.timeoutMs ?? defaultTimeoutMs,
      maxOutputBytes: maxWavBytes,
    });
    // A few voices at most are kept; one asked for once and never again is not worth a waiting process.
    if (this.speakers.size >= keptVoices) {
      const [oldest, kept] = this.speakers.entries().next().value!;
      kept.close();
      this.speakers.delete(oldest);
    }
    this.speakers.set(voice, speaker);
    return speaker;
  }

  async status(): Promise<SpeechStatus> {
    const details = { voice: this.options.voice || 'default' };
    if (!installedProgram(this.program)) return { state: 'failed', message: 'espeak-ng is not installed: apt install espeak-ng (or set TTS_BACKEND to another backend).', details };
    if (!this.options.converter.installed) return { state: 'failed', message: 'ffmpeg is not installed, and espeak-ng\'s speech is converted by it: apt install ffmpeg.', details };
    const refusal = this.options.jail.refusal('Text to speech with espeak-ng');
    if (refusal !== undefined) return { state: 'failed', message: refusal, details };
    return { state: 'connected', details };
  }
}

/** How long espeak-ng's WAV plays: it writes the canonical 44-byte header (with its sizes left open, as a stream). */
function wavSeconds(wav: Buffer): number | undefined {
  if (wav.length < 44 || wav.toString('ascii', 0, 4) !== 'RIFF') return undefined;
  const bytesPerSecond = wav.readUInt32LE(28);
  return bytesPerSecond > 0 ? (wav.length - 44) / bytesPerSecond : undefined;
}
