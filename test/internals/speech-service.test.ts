import { pino } from 'pino';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { IntegrationRegistry } from '../../src/integrations/integration-registry.ts';
import { SpeechService } from '../../src/speech/speech-service.ts';
import { speechFailure, type SpeechStatus, type SpeechToText, type Transcription } from '../../src/speech/speech-types.ts';

const logger = pino({ level: 'silent' });

/** A speech-to-text backend whose status and answers the test sets. */
function steeredBackend() {
  const steer = {
    status: { state: 'failed', message: 'Wyoming server at tcp://host:10300 refused the connection', details: { url: 'tcp://host:10300' } } as SpeechStatus,
    answer: { success: true, text: 'Hello', seconds: 1 } as Transcription,
  };
  const backend: SpeechToText = { id: 'wyoming', transcribe: async () => steer.answer, status: async () => steer.status };
  return { steer, backend };
}

afterEach(() => {
  vi.useRealTimers();
});

describe('SpeechService', () => {
  it('reports each side, and checks a failed one again each minute until it answers', async () => {
    vi.useFakeTimers();
    const { steer, backend } = steeredBackend();
    const integrations = new IntegrationRegistry();
    const speech = new SpeechService({ stt: backend, integrations, logger });
    speech.start();
    await speech.firstCheck();
    expect(integrations.list()).toEqual([
      { name: 'speech_to_text', status: 'failed', message: steer.status.message, details: { backend: 'wyoming', url: 'tcp://host:10300' } },
      { name: 'text_to_speech', status: 'not_configured', message: expect.stringContaining('TTS_BACKEND'), details: { backend: 'none' } },
    ]);
    expect(speech.summary()).toBe('speech: STT wyoming (failed), TTS off');
    steer.status = { state: 'connected', details: { url: 'tcp://host:10300' } };
    await vi.advanceTimersByTimeAsync(60_000);
    expect(integrations.get('speech_to_text')?.status).toBe('connected');
    speech.close();
  });

  it('marks the side failed when a call finds the server gone, and connected again when one gets through', async () => {
    const { steer, backend } = steeredBackend();
    steer.status = { state: 'connected', details: {} };
    const integrations = new IntegrationRegistry();
    const speech = new SpeechService({ stt: backend, integrations, logger });
    await speech.check();
    steer.answer = speechFailure('speech_unreachable', 'Wyoming server at tcp://host:10300 refused the connection');
    expect(await speech.transcribe({ bytes: Buffer.from('pcm'), mimeType: 'audio/wav' })).toEqual(steer.answer);
    expect(integrations.get('speech_to_text')).toMatchObject({ status: 'failed', message: 'Wyoming server at tcp://host:10300 refused the connection' });
    steer.answer = { success: true, text: 'Back', seconds: 1 };
    await speech.transcribe({ bytes: Buffer.from('pcm'), mimeType: 'audio/wav' });
    expect(integrations.get('speech_to_text')?.status).toBe('connected');
  });

  it('refuses without a backend, saying which setting to change', async () => {
    const speech = new SpeechService({ integrations: new IntegrationRegistry(), logger });
    expect(await speech.transcribe({ bytes: Buffer.from('x'), mimeType: 'audio/wav' })).toEqual(SpeechService.sttNotConfigured);
    expect(await speech.synthesize('Hi', { format: 'mp3' })).toEqual(SpeechService.ttsNotConfigured);
    expect(SpeechService.sttNotConfigured.message).toContain('STT_BACKEND=wyoming');
  });
});
