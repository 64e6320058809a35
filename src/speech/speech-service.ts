import type { IntegrationRegistry } from '../integrations/integration-registry.ts';
import type { Logger } from '../logger.ts';
import { noSpeechToText, noTextToSpeech } from './none-backends.ts';
import type { AudioClip, SpeechStatus, SpeechToText, Synthesis, SynthesizeOptions, TextToSpeech, Transcription, TranscribeOptions } from './speech-types.ts';

export const speechToTextIntegration = 'speech_to_text';
export const textToSpeechIntegration = 'text_to_speech';

export interface SpeechServiceOptions {
  stt?: SpeechToText;
  tts?: TextToSpeech;
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

  constructor(options: SpeechServiceOptions) {
    this.stt = options.stt ?? noSpeechToText;
    this.tts = options.tts ?? noTextToSpeech;
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

  async transcribe(clip: AudioClip, options: TranscribeOptions = {}): Promise<Transcription> {
    return this.stt.transcribe(clip, { ...options, signal: this.signalFor(options.signal) });
  }

  async synthesize(text: string, options: SynthesizeOptions): Promise<Synthesis> {
    return this.tts.synthesize(text, { ...options, signal: this.signalFor(options.signal) });
  }

  /** Checks both backends in the background and reports them; `checked()` waits for it. */
  start(): void {
    this.checked ??= this.check();
  }

  /** Resolves once the first status check has been reported (at once when start was not called). */
  async firstCheck(): Promise<void> {
    await this.checked;
  }

  /** Checks both backends again and reports what they say. */
  async check(): Promise<void> {
    const [stt, tts] = await Promise.all([this.statusOf(this.stt), this.statusOf(this.tts)]);
    this.report(speechToTextIntegration, this.stt, stt);
    this.report(textToSpeechIntegration, this.tts, tts);
  }

  /** Ends what is under way: a transcription or synthesis running now is aborted. */
  close(): void {
    this.controller.abort();
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
