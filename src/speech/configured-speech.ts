import type { Config } from '../config.ts';
import type { IntegrationRegistry } from '../integrations/integration-registry.ts';
import type { Jail } from '../jail/jail.ts';
import type { Logger } from '../logger.ts';
import { SpeechService } from './speech-service.ts';

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
  return new SpeechService({ integrations: options.integrations, logger: options.logger });
}
