import OpenAI, { APIConnectionError, APIError, toFile } from 'openai';
import { messageOf } from '../failure.ts';
import { shownUrl, socketErrorCode, unreachableMessage } from './speech-server-failures.ts';
import {
  speechFailure,
  speechMimeTypes,
  type AudioClip,
  type SpeechFailure,
  type SpeechFormat,
  type SpeechStatus,
  type SpeechToText,
  type Synthesis,
  type SynthesizeOptions,
  type TextToSpeech,
  type TranscribeOptions,
  type Transcription,
} from './speech-types.ts';
import { pcmMimeType, pcmSeconds, speechPcm, wavFromPcm } from './wav.ts';

export interface OpenAiSpeechOptions {
  /** The base URL, e.g. http://host:8000/v1 (the one whose /audio/transcriptions or /audio/speech answers). */
  url: string;
  model: string;
  apiKey: string;
  /** How long a call may take. */
  timeoutMs?: number;
}

const serverName = 'The OpenAI-compatible speech server';
const running = 'the server (speaches, LocalAI, whisper.cpp, Kokoro-FastAPI…)';
const statusTimeoutMs = 5_000;
const callTimeoutMs = 60_000;
/** OpenAI's name of each format. */
const responseFormats: Record<SpeechFormat, 'mp3' | 'opus' | 'wav'> = { mp3: 'mp3', ogg_opus: 'opus', wav: 'wav' };

function clientFor(options: OpenAiSpeechOptions): OpenAI {
  return new OpenAI({ baseURL: options.url, apiKey: options.apiKey || 'not-needed', maxRetries: 0, timeout: options.timeoutMs ?? callTimeoutMs });
}

/** STT_BACKEND=openai: `POST {STT_URL}/audio/transcriptions` through the openai client. */
export class OpenAiSpeechToText implements SpeechToText {
  readonly id = 'openai';
  private readonly client: OpenAI;

  constructor(private readonly options: OpenAiSpeechOptions) {
    this.client = clientFor(options);
  }

  async transcribe(clip: AudioClip, options: TranscribeOptions): Promise<Transcription> {
    const upload = clip.mimeType === pcmMimeType ? { bytes: wavFromPcm(clip.bytes, speechPcm), name: 'speech.wav', type: 'audio/wav' } : { bytes: clip.bytes, name: fileNameFor(clip.mimeType), type: clip.mimeType };
    try {
      const file = await toFile(upload.bytes, upload.name, { type: upload.type });
      const result = await this.client.audio.transcriptions.create(
        { file, model: this.options.model, ...(options.language && { language: options.language }), response_format: 'json' },
        { ...(options.signal && { signal: options.signal }) },
      );
      const text = result.text.trim();
      const seconds = clip.mimeType === pcmMimeType ? pcmSeconds(clip.bytes.length, speechPcm) : 0;
      if (text === '') return speechFailure('no_speech', 'Nothing was heard in the recording.');
      return { success: true, text, seconds };
    } catch (error) {
      return callFailure(error, this.options, 'STT_API_KEY', options.signal);
    }
  }

  status(): Promise<SpeechStatus> {
    return serverStatus(this.options, 'STT_API_KEY');
  }
}

/** TTS_BACKEND=openai: `POST {TTS_URL}/audio/speech {model, input, voice, response_format}`. */
export class OpenAiTextToSpeech implements TextToSpeech {
  readonly id = 'openai';
  private readonly client: OpenAI;

  constructor(
    private readonly options: OpenAiSpeechOptions & { voice: string },
  ) {
    this.client = clientFor(options);
  }

  async synthesize(text: string, options: SynthesizeOptions): Promise<Synthesis> {
    try {
      const response = await this.client.audio.speech.create(
        { model: this.options.model, input: text, voice: options.voice || this.options.voice || 'alloy', response_format: responseFormats[options.format] },
        { ...(options.signal && { signal: options.signal }) },
      );
      const bytes = Buffer.from(await response.arrayBuffer());
      if (bytes.length === 0) return speechFailure('speech_failed', `${serverName} at ${shownUrl(this.options.url)} sent no audio.`);
      return { success: true, audio: { bytes, mimeType: speechMimeTypes[options.format] } };
    } catch (error) {
      return callFailure(error, this.options, 'TTS_API_KEY', options.signal);
    }
  }

  status(): Promise<SpeechStatus> {
    return serverStatus(this.options, 'TTS_API_KEY');
  }
}

function fileNameFor(mimeType: string): string {
  const type = mimeType.split(';')[0]!.trim().toLowerCase();
  const extensions: Record<string, string> = {
    'audio/wav': 'wav',
    'audio/x-wav': 'wav',
    'audio/wave': 'wav',
    'audio/mpeg': 'mp3',
    'audio/mp3': 'mp3',
    'audio/ogg': 'ogg',
    'audio/opus': 'ogg',
    'audio/webm': 'webm',
    'audio/mp4': 'm4a',
    'audio/x-m4a': 'm4a',
    'audio/flac': 'flac',
  };
  return `speech.${extensions[type] ?? 'bin'}`;
}

function callFailure(error: unknown, options: OpenAiSpeechOptions, keyName: string, signal: AbortSignal | undefined): SpeechFailure {
  const address = shownUrl(options.url);
  if (signal?.aborted) return speechFailure('speech_failed', 'Stopped before the speech server answered.');
  if (error instanceof APIConnectionError) return speechFailure('speech_unreachable', unreachableMessage(serverName, address, socketErrorCode(error), running));
  if (error instanceof APIError && (error.status === 401 || error.status === 403)) {
    return speechFailure('speech_unreachable', `${serverName} at ${address} refused the API key (HTTP ${error.status}): set ${keyName} to a key it accepts.`);
  }
  if (error instanceof APIError && error.status === 404) {
    return speechFailure('speech_unreachable', `${serverName} at ${address} has no such endpoint (HTTP 404): the URL must be the base that ends before /audio, e.g. http://host:8000/v1.`);
  }
  if (error instanceof APIError) return speechFailure('speech_failed', `${serverName} at ${address} answered HTTP ${error.status ?? '?'}: ${messageOf(error).slice(0, 300)}`);
  return speechFailure('speech_failed', `${serverName} at ${address} failed: ${messageOf(error).slice(0, 300)}`);
}

/** Whether the server answers: `GET {url}/models`; a 404 still means something answers there (not every audio server lists models). */
async function serverStatus(options: OpenAiSpeechOptions, keyName: string): Promise<SpeechStatus> {
  const address = shownUrl(options.url);
  const details = { url: address, model: options.model };
  let response: Response;
  try {
    response = await fetch(`${options.url.replace(/\/+$/, '')}/models`, {
      headers: options.apiKey ? { authorization: `Bearer ${options.apiKey}` } : {},
      signal: AbortSignal.timeout(statusTimeoutMs),
    });
    await response.body?.cancel();
  } catch (error) {
    const code = (error as Error).name === 'TimeoutError' ? 'ETIMEDOUT' : socketErrorCode(error);
    return { state: 'failed', message: unreachableMessage(serverName, address, code, running), details };
  }
  if (response.status === 401 || response.status === 403) {
    return { state: 'failed', message: `${serverName} at ${address} refused the API key (HTTP ${response.status}): set ${keyName} to a key it accepts.`, details };
  }
  if (response.status >= 500) return { state: 'failed', message: `${serverName} at ${address} answered HTTP ${response.status}: check its log.`, details };
  return { state: 'connected', details };
}
