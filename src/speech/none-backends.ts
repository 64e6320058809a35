import { speechFailure, type SpeechToText, type TextToSpeech } from './speech-types.ts';

export const sttNotConfiguredMessage =
  'No speech-to-text is configured. Set STT_BACKEND=wyoming with STT_URL=tcp://host:10300 (e.g. wyoming-faster-whisper), or STT_BACKEND=openai with STT_URL=http://host:8000/v1, then restart Hearth.';

export const ttsNotConfiguredMessage =
  'No text-to-speech is configured. Install espeak-ng (apt install espeak-ng) and leave TTS_BACKEND=auto, or set TTS_BACKEND=wyoming or openai with TTS_URL, then restart Hearth.';

/** STT_BACKEND=none: every transcription is refused as not configured. */
export const noSpeechToText: SpeechToText = {
  id: 'none',
  transcribe: async () => speechFailure('stt_not_configured', sttNotConfiguredMessage),
  status: async () => ({ state: 'not_configured', message: sttNotConfiguredMessage, details: { backend: 'none' } }),
};

/** TTS_BACKEND=none (or auto without espeak-ng): every synthesis is refused as not configured. */
export const noTextToSpeech: TextToSpeech = {
  id: 'none',
  synthesize: async () => speechFailure('tts_not_configured', ttsNotConfiguredMessage),
  status: async () => ({ state: 'not_configured', message: ttsNotConfiguredMessage, details: { backend: 'none' } }),
};
