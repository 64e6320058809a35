import type { AudioConverter } from './audio-convert.ts';
import { speechFailure, type AudioClip, type SpeechFailure, type SpeechStatus, type SpeechToText, type Synthesis, type SynthesizeOptions, type TextToSpeech, type TranscribeOptions, type Transcription } from './speech-types.ts';
import { WyomingConnection, WyomingFailure, wyomingAddress, type WyomingAddress } from './wyoming-connection.ts';
import { pcmMimeType, pcmSeconds, speechPcm, wavFromPcm, type PcmFormat } from './wav.ts';

const callTimeoutMs = 60_000;
const statusTimeoutMs = 5_000;
/** One second of 16 kHz mono s16le a chunk, as Wyoming clients commonly send. */
const chunkBytes = speechPcm.rate * speechPcm.width;
const maxSpeechBytes = 64 * 1024 * 1024;

/** STT_BACKEND=wyoming: `transcribe`, `audio-start`, `audio-chunk`s, `audio-stop` → `transcript` (e.g. wyoming-faster-whisper). */
export class WyomingSpeechToText implements SpeechToText {
  readonly id = 'wyoming';
  private readonly address: WyomingAddress;
  private readonly timeoutMs: number;

  constructor(options: { url: string; timeoutMs?: number }) {
    this.address = wyomingAddress(options.url, 'wyoming-faster-whisper');
    this.timeoutMs = options.timeoutMs ?? callTimeoutMs;
  }

  async transcribe(clip: AudioClip, options: TranscribeOptions): Promise<Transcription> {
    if (clip.mimeType !== pcmMimeType) return speechFailure('speech_failed', 'The Wyoming backend is handed 16 kHz mono PCM; this clip was not converted.');
    let connection: WyomingConnection | undefined;
    try {
      connection = await WyomingConnection.open(this.address, { timeoutMs: this.timeoutMs, ...(options.signal && { signal: options.signal }) });
      const format = { rate: speechPcm.rate, width: speechPcm.width, channels: speechPcm.channels };
      connection.send({ type: 'transcribe', data: options.language ? { language: options.language } : {} });
      connection.send({ type: 'audio-start', data: { ...format, timestamp: 0 } });
      for (let offset = 0; offset < clip.bytes.length; offset += chunkBytes) {
        const timestamp = Math.round(pcmSeconds(offset, speechPcm) * 1000);
        connection.send({ type: 'audio-chunk', data: { ...format, timestamp }, payload: clip.bytes.subarray(offset, offset + chunkBytes) });
      }
      connection.send({ type: 'audio-stop', data: { timestamp: Math.round(pcmSeconds(clip.bytes.length, speechPcm) * 1000) } });
      const transcript = await connection.nextOf('transcript');
      const text = typeof transcript.data.text === 'string' ? transcript.data.text.trim() : '';
      if (text === '') return speechFailure('no_speech', 'Nothing was heard in the recording.');
      const language = typeof transcript.data.language === 'string' ? transcript.data.language : undefined;
      return { success: true, text, seconds: pcmSeconds(clip.bytes.length, speechPcm), ...(language && { language }) };
    } catch (error) {
      return asFailure(error);
    } finally {
      connection?.close();
    }
  }

  status(): Promise<SpeechStatus> {
    return describe(this.address, 'asr');
  }
}

export interface WyomingTextToSpeechOptions {
  url: string;
  converter: AudioConverter;
  /** The voice when a call names none (TTS_VOICE); '' is the server's default. */
  voice: string;
  timeoutMs?: number;
}

/** TTS_BACKEND=wyoming: `synthesize` → `audio-start`, `audio-chunk`s, `audio-stop` (e.g. wyoming-piper); the PCM becomes WAV, or ffmpeg encodes it. */
export class WyomingTextToSpeech implements TextToSpeech {
  readonly id = 'wyoming';
  private readonly address: WyomingAddress;

  constructor(private readonly options: WyomingTextToSpeechOptions) {
    this.address = wyomingAddress(options.url, 'wyoming-piper');
  }

  async synthesize(text: string, options: SynthesizeOptions): Promise<Synthesis> {
    let connection: WyomingConnection | undefined;
    let pcm: Buffer;
    let format: PcmFormat;
    try {
      connection = await WyomingConnection.open(this.address, { timeoutMs: this.options.timeoutMs ?? callTimeoutMs, ...(options.signal && { signal: options.signal }) });
      const voice = options.voice || this.options.voice;
      connection.send({ type: 'synthesize', data: { text, ...(voice && { voice: { name: voice } }) } });
      const start = await connection.nextOf('audio-start');
      format = pcmFormatOf(start.data);
      const chunks: Buffer[] = [];
      let bytes = 0;
      for (;;) {
        const event = await connection.nextOf('audio-chunk', 'audio-stop');
        if (event.type === 'audio-stop') break;
        if (!event.payload) continue;
        bytes += event.payload.length;
        if (bytes > maxSpeechBytes) return speechFailure('speech_failed', `The Wyoming server at ${this.address.shown} sent more audio than Hearth takes for one text.`);
        chunks.push(event.payload);
      }
      pcm = Buffer.concat(chunks);
    } catch (error) {
      return asFailure(error);
    } finally {
      connection?.close();
    }
    if (pcm.length === 0) return speechFailure('speech_failed', `The Wyoming server at ${this.address.shown} sent no audio for the text.`);
    const wav = wavFromPcm(pcm, format);
    const seconds = pcmSeconds(pcm.length, format);
    if (options.format === 'wav' && format.width === 2) return { success: true, audio: { bytes: wav, mimeType: 'audio/wav' }, seconds };
    const encoded = await this.options.converter.encode({ bytes: wav, mimeType: 'audio/wav' }, options.format, options.signal ? { signal: options.signal } : {});
    return encoded.success ? { success: true, audio: encoded.audio, seconds } : encoded;
  }

  status(): Promise<SpeechStatus> {
    return describe(this.address, 'tts');
  }
}

function pcmFormatOf(data: Record<string, unknown>): PcmFormat {
  const whole = (value: unknown, fallback: number, limit: number) => (typeof value === 'number' && Number.isInteger(value) && value > 0 && value <= limit ? value : fallback);
  return { rate: whole(data.rate, 22_050, 192_000), width: whole(data.width, 2, 4), channels: whole(data.channels, 1, 8) };
}

function asFailure(error: unknown): SpeechFailure {
  if (error instanceof WyomingFailure) return speechFailure(error.kind === 'unreachable' ? 'speech_unreachable' : 'speech_failed', error.message);
  throw error;
}

/** `describe` → `info`: connected when the server offers the service (`asr` or `tts`) with an installed model. */
async function describe(address: WyomingAddress, service: 'asr' | 'tts'): Promise<SpeechStatus> {
  const details: Record<string, unknown> = { url: address.shown };
  let connection: WyomingConnection | undefined;
  try {
    connection = await WyomingConnection.open(address, { timeoutMs: statusTimeoutMs });
    connection.send({ type: 'describe' });
    const info = await connection.nextOf('info');
    const programs = Array.isArray(info.data[service]) ? (info.data[service] as Array<Record<string, unknown>>) : [];
    const models = programs.flatMap((program) => (Array.isArray(program.models) ? (program.models as Array<Record<string, unknown>>) : []));
    const installed = models.filter((model) => model.installed !== false).map((model) => String(model.name ?? '?'));
    const offered = Object.keys(info.data).filter((key) => Array.isArray(info.data[key]) && (info.data[key] as unknown[]).length > 0);
    if (programs.length === 0) {
      const what = service === 'asr' ? 'speech to text' : 'text to speech';
      const setting = service === 'asr' ? 'STT_URL' : 'TTS_URL';
      return { state: 'failed', message: `The Wyoming server at ${address.shown} offers no ${what}${offered.length > 0 ? ` (it offers ${offered.join(', ')})` : ''}: is ${setting} the port of ${address.runningWhat}?`, details };
    }
    details.programs = programs.map((program) => String(program.name ?? '?'));
    details.models = installed.slice(0, 20);
    return { state: 'connected', details };
  } catch (error) {
    if (error instanceof WyomingFailure) return { state: 'failed', message: error.message, details };
    throw error;
  } finally {
    connection?.close();
  }
}
