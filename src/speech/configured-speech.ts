import type { Config } from '../config.ts';
import type { IntegrationRegistry } from '../integrations/integration-registry.ts';
import type { Jail } from '../jail/jail.ts';
import type { Logger } from '../logger.ts';
import { AudioConverter } from './audio-convert.ts';
import { EspeakTextToSpeech } from './espeak-speech.ts';
import { SpeechService } from './speech-service.ts';
import type { SpeechStatus, SpeechToText, TextToSpeech } from './speech-types.ts';
import { speechFailure } from './speech-types.ts';
import { WyomingSpeechToText, WyomingTextToSpeech } from './wyoming-speech.ts';

export type SpeechConfig = Pick<
  Config,
  'STT_BACKEND' | 'STT_URL' | 'STT_MODEL' | 'STT_API_KEY' | 'STT_LANGUAGE' | 'TTS_BACKEND' | 'TTS_URL' | 'TTS_MODEL' | 'TTS_VOICE' | 'TTS_API_KEY' | 'VOICE_MAX_SECONDS'
>;

export interface ConfiguredSpeechOptions {
  config: SpeechConfig;
  integrations: IntegrationRegistry;
  logger: Logger;
  /** ffmpeg and espeak-ng run in its strict jail, without network, when it is on. */
  jail: Jail;
}

/** The SpeechService the configuration asks for (STT_BACKEND, TTS_BACKEND). */
export async function configuredSpeech(options: ConfiguredSpeechOptions): Promise<SpeechService> {
  const { config, jail } = options;
  const converter = new AudioConverter({ jail });
  return new SpeechService({
    stt: await speechToText(config),
    tts: await textToSpeech(config, jail, converter),
    converter,
    maxSeconds: config.VOICE_MAX_SECONDS,
    language: config.STT_LANGUAGE,
    integrations: options.integrations,
    logger: options.logger,
  });
}

// The OpenAI client (500 modules) is loaded only for a backend that uses it.
async function speechToText(config: SpeechConfig): Promise<SpeechToText | undefined> {
  switch (config.STT_BACKEND) {
    case 'none':
      return undefined;
    case 'openai': {
      const wrong = urlProblem(config.STT_URL, 'http', 'STT');
      if (wrong) return misconfigured('openai', wrong);
      const { OpenAiSpeechToText } = await import('./openai-speech.ts');
      return new OpenAiSpeechToText({ url: config.STT_URL, model: config.STT_MODEL, apiKey: config.STT_API_KEY });
    }
    case 'wyoming': {
      const wrong = urlProblem(config.STT_URL, 'tcp', 'STT');
      return wrong ? misconfigured('wyoming', wrong) : new WyomingSpeechToText({ url: config.STT_URL });
    }
  }
  return undefined;
}

async function textToSpeech(config: SpeechConfig, jail: Jail, converter: AudioConverter): Promise<TextToSpeech | undefined> {
  switch (config.TTS_BACKEND) {
    case 'none':
      return undefined;
    case 'auto':
      return EspeakTextToSpeech.installed() ? new EspeakTextToSpeech({ jail, converter, voice: config.TTS_VOICE }) : undefined;
    case 'espeak-ng':
      return new EspeakTextToSpeech({ jail, converter, voice: config.TTS_VOICE });
    case 'openai': {
      const wrong = urlProblem(config.TTS_URL, 'http', 'TTS');
      if (wrong) return misconfigured('openai', wrong);
      const { OpenAiTextToSpeech } = await import('./openai-speech.ts');
      return new OpenAiTextToSpeech({ url: config.TTS_URL, model: config.TTS_MODEL, apiKey: config.TTS_API_KEY, voice: config.TTS_VOICE });
    }
    case 'wyoming': {
      const wrong = urlProblem(config.TTS_URL, 'tcp', 'TTS');
      return wrong ? misconfigured('wyoming', wrong) : new WyomingTextToSpeech({ url: config.TTS_URL, converter, voice: config.TTS_VOICE });
    }
  }
  return undefined;
}

/** What is wrong with a backend's URL for its kind, in words with the fix; undefined when it fits. */
function urlProblem(url: string, kind: 'http' | 'tcp', prefix: 'STT' | 'TTS'): string | undefined {
  const backend = kind === 'http' ? 'openai' : 'wyoming';
  const example = kind === 'http' ? 'http://host:8000/v1' : prefix === 'STT' ? 'tcp://host:10300' : 'tcp://host:10200';
  if (url === '') return `${prefix}_BACKEND=${backend} needs ${prefix}_URL, e.g. ${prefix}_URL=${example}.`;
  const protocol = new URL(url).protocol;
  const fits = kind === 'http' ? protocol === 'http:' || protocol === 'https:' : protocol === 'tcp:';
  return fits ? undefined : `${prefix}_BACKEND=${backend} needs ${kind === 'http' ? 'an http(s) base URL' : 'a tcp://host:port URL'} in ${prefix}_URL, e.g. ${example}.`;
}

/** A backend the configuration names but cannot work as set: its status says what to fix, and every call is refused with it. */
function misconfigured(id: string, message: string): SpeechToText & TextToSpeech {
  const status: SpeechStatus = { state: 'failed', message, details: {} };
  return {
    id,
    transcribe: async () => speechFailure('speech_unreachable', message),
    synthesize: async () => speechFailure('speech_unreachable', message),
    status: async () => status,
  };
}
