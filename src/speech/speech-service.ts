import type { IntegrationRegistry } from '../integrations/integration-registry.ts';
import type { Logger } from '../logger.ts';
import type { AudioConverter } from './audio-convert.ts';
import { noSpeechToText, noTextToSpeech, sttNotConfiguredMessage, ttsNotConfiguredMessage } from './none-backends.ts';
import { speechFailure } from './speech-types.ts';
import type { AudioClip, SpeechFailure, SpeechStatus, SpeechToText, Synthesis, SynthesizeOptions, TextToSpeech, Transcription, TranscribeOptions } from './speech-types.ts';
import { pcmMimeType } from './wav.ts';

export const speechToTextIntegration = 'speech_to_text';
export const textToSpeechIntegration = 'text_to_speech';
/** A failed backend is checked again this often, so one that comes back shows as connected without a call. */
const recheckEveryMs = 60_000;

export interface SpeechServiceOptions {
  stt?: SpeechToText;
  tts?: TextToSpeech;
  /** Decodes what people send to the 16 kHz mono PCM every speech-to-text backend is handed (and measures it). */
  converter?: AudioConverter;
  /** The longest recording transcribed (VOICE_MAX_SECONDS). */
  maxSeconds?: number;
  /** The language spoken when a call names none (STT_LANGUAGE; '' lets the server tell). */
  language?: string;
  integrations: IntegrationRegistry;
  logger: Logger;
}

/**
 * Hearth's speech: one speech-to-text and one text-to-speech backend, chosen by the configuration.
 * Routes, channels and the OpenAI-compatible door call `transcribe` and `synthesize`; failures come
 * back as data (`{success:false, code, message}`). Each backend's status goes to the integration
 * registry as `speech_to_text` and `text_to_speech`.
 */
export class SpeechService {
  readonly stt: SpeechToText;
  readonly tts: TextToSpeech;
  private readonly integrations: IntegrationRegistry;
  private readonly logger: Logger;
  private readonly controller = new AbortController();
  private checked: Promise<void> | undefined;
  private recheck: NodeJS.Timeout | undefined;
  private readonly converter: AudioConverter | undefined;
  readonly maxSeconds: number;
  private readonly language: string;

  constructor(options: SpeechServiceOptions) {
    this.stt = options.stt ?? noSpeechToText;
    this.tts = options.tts ?? noTextToSpeech;
    this.converter = options.converter;
    this.maxSeconds = options.maxSeconds ?? 120;
    this.language = options.language ?? '';
    this.integrations = options.integrations;
    this.logger = options.logger;
  }

  /** Whether anything can be transcribed at all (a configured backend, reachable or not). */
  get canTranscribe(): boolean {
    return this.stt.id !== 'none';
  }

  get canSynthesize(): boolean {
    return this.tts.id !== 'none';
  }

  /** Why nothing can be transcribed (no STT_BACKEND), with the setting to change. */
  static readonly sttNotConfigured = speechFailure('stt_not_configured', sttNotConfiguredMessage);

  /** Why nothing can be spoken (no TTS_BACKEND, or auto without espeak-ng). */
  static readonly ttsNotConfigured = speechFailure('tts_not_configured', ttsNotConfiguredMessage);

  /**
   * The words of a recording in any format ffmpeg reads: decoded to 16 kHz mono PCM first (a longer
   * one than VOICE_MAX_SECONDS is refused as `audio_too_long`, an unreadable one as
   * `audio_unreadable`), then handed to the backend.
   */
  async transcribe(clip: AudioClip, options: TranscribeOptions = {}): Promise<Transcription> {
    const signal = this.signalFor(options.signal);
    const language = options.language ?? this.language;
    const call = { signal, ...(language !== '' && { language }) };
    if (!this.canTranscribe) return this.stt.transcribe(clip, call);
    if (!this.converter) return this.observed(speechToTextIntegration, this.stt, await this.stt.transcribe(clip, call));
    const decoded = await this.converter.toSpeechPcm(clip, { maxSeconds: this.maxSeconds, signal });
    if (!decoded.success) return decoded;
    const result = await this.stt.transcribe({ bytes: decoded.pcm, mimeType: pcmMimeType }, call);
    return this.observed(speechToTextIntegration, this.stt, result.success ? { ...result, seconds: decoded.seconds } : result);
  }

  /** The text spoken, as MP3, OGG/Opus or WAV. */
  async synthesize(text: string, options: SynthesizeOptions): Promise<Synthesis> {
    const result = await this.tts.synthesize(text, { ...options, signal: this.signalFor(options.signal) });
    return this.canSynthesize ? this.observed(textToSpeechIntegration, this.tts, result) : result;
  }

  /** A call that found the server gone marks it failed at once; one that worked after a failure marks it connected again. */
  private observed<Result extends { success: true } | SpeechFailure>(name: string, backend: SpeechToText | TextToSpeech, result: Result): Result {
    const current = this.integrations.get(name);
    if (!result.success && result.code === 'speech_unreachable') {
      this.integrations.report({ name, status: 'failed', message: result.message, details: current?.details ?? { backend: backend.id } });
    } else if (result.success && current?.status === 'failed') {
      this.integrations.report({ name, status: 'connected', details: current.details });
    }
    return result;
  }

  /** Checks both backends in the background and reports them, then again each minute while one has failed; `firstCheck()` waits for the first. */
  start(): void {
    // The recordings' decoder waits started, so the first one does not wait for ffmpeg to load. Text to speech is on
    // by default (espeak-ng), so its programs start with the first sentence instead, and wait ready from then on.
    if (this.canTranscribe && this.converter?.problem() === undefined) this.converter?.prepare(this.maxSeconds);
    this.checked ??= this.check();
    this.recheck ??= setInterval(() => {
      const failed = [speechToTextIntegration, textToSpeechIntegration].some((name) => this.integrations.get(name)?.status === 'failed');
      if (failed) void this.check();
    }, recheckEveryMs).unref();
  }

  /** Resolves once the first status check has been reported (at once when start was not called). */
  async firstCheck(): Promise<void> {
    await this.checked;
  }

  /** Checks both backends again and reports what they say. */
  async check(): Promise<void> {
    const [reached, tts] = await Promise.all([this.statusOf(this.stt), this.statusOf(this.tts)]);
    // Every recording goes through ffmpeg first: a server that answers is no use without it.
    const conversion = this.canTranscribe ? this.converter?.problem() : undefined;
    const stt: SpeechStatus = conversion !== undefined && reached.state === 'connected' ? { ...reached, state: 'failed', message: conversion } : reached;
    this.report(speechToTextIntegration, this.stt, stt);
    this.report(textToSpeechIntegration, this.tts, tts);
  }

  /** Ends what is under way: a transcription or synthesis running now is aborted. */
  close(): void {
    clearInterval(this.recheck);
    this.controller.abort();
    this.tts.close?.();
    this.converter?.close();
  }

  /** For the start-up summary: e.g. `speech: STT wyoming (connected), TTS espeak-ng (connected)`. */
  summary(): string {
    const part = (label: string, name: string, backend: { id: string }) => {
      const status = this.integrations.get(name);
      return backend.id === 'none' ? `${label} off` : `${label} ${backend.id} (${status?.status ?? 'not checked'})`;
    };
    return `speech: ${part('STT', speechToTextIntegration, this.stt)}, ${part('TTS', textToSpeechIntegration, this.tts)}`;
  }

  private async statusOf(backend: SpeechToText | TextToSpeech): Promise<SpeechStatus> {
    try {
      return await backend.status();
    } catch (error) {
      this.logger.error({ err: error, backend: backend.id }, 'speech backend status check failed');
      return { state: 'failed', message: `The ${backend.id} speech backend's check failed: ${(error as Error).message}`, details: { backend: backend.id } };
    }
  }

  private report(name: string, backend: { id: string }, status: SpeechStatus): void {
    this.integrations.report({
      name,
      status: status.state,
      ...(status.message !== undefined && { message: status.message }),
      details: { backend: backend.id, ...status.details },
    });
    if (status.state === 'failed') this.logger.warn(`${name}: ${status.message ?? 'failed'}`);
  }

  private signalFor(signal: AbortSignal | undefined): AbortSignal {
    return signal ? AbortSignal.any([signal, this.controller.signal]) : this.controller.signal;
  }
}
