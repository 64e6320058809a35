import { afterEach, describe, expect, it } from 'vitest';
import { OpenAiSpeechToText, OpenAiTextToSpeech } from '../../src/speech/openai-speech.ts';
import { pcmMimeType } from '../../src/speech/wav.ts';
import { freeLoopbackPort } from '../support/loopback-port.ts';
import { startOpenAiAudioStandIn, type OpenAiAudioStandIn, type OpenAiAudioStandInOptions } from '../support/openai-audio-stand-in.ts';
import { tonePcm } from '../support/tone.ts';

const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});

async function standIn(options: OpenAiAudioStandInOptions = {}): Promise<OpenAiAudioStandIn> {
  const server = await startOpenAiAudioStandIn(options);
  closers.push(() => server.close());
  return server;
}

/** An address nothing listens on: a port just closed. */
async function deadUrl(): Promise<string> {
  return `http://127.0.0.1:${await freeLoopbackPort()}/v1`;
}

const pcm = { bytes: tonePcm(1.5, 16_000), mimeType: pcmMimeType };

describe('OpenAI-compatible speech to text', () => {
  it('posts the PCM as a WAV file with the model, language and key, and reads the text', async () => {
    const server = await standIn({ apiKey: 'secret', transcript: '  Lights off, please. ' });
    const stt = new OpenAiSpeechToText({ url: server.url, model: 'Systran/faster-whisper-small', apiKey: 'secret' });
    expect(await stt.transcribe(pcm, { language: 'en' })).toEqual({ success: true, text: 'Lights off, please.', seconds: 1.5 });
    const [request] = server.transcriptions;
    expect(request).toMatchObject({ model: 'Systran/faster-whisper-small', language: 'en', fileName: 'speech.wav', fileType: 'audio/wav', authorization: 'Bearer secret' });
    expect(request!.bytes.readUInt32LE(24)).toBe(16_000);
    expect(request!.bytes.readUInt16LE(22)).toBe(1);
    expect(request!.bytes.subarray(44).equals(pcm.bytes)).toBe(true);
    expect(await stt.status()).toEqual({ state: 'connected', details: { url: server.url, model: 'Systran/faster-whisper-small' } });
  });

  it('calls an empty transcript no_speech', async () => {
    const server = await standIn({ transcript: ' ' });
    expect(await new OpenAiSpeechToText({ url: server.url, model: 'whisper-1', apiKey: '' }).transcribe(pcm, {})).toEqual({
      success: false,
      code: 'no_speech',
      message: 'Nothing was heard in the recording.',
    });
  });

  it('names a refused key, a wrong base URL and a dead server with the fix', async () => {
    const server = await standIn({ apiKey: 'right' });
    const wrongKey = new OpenAiSpeechToText({ url: server.url, model: 'whisper-1', apiKey: 'wrong' });
    const refusedKey = `The OpenAI-compatible speech server at ${server.url} refused the API key (HTTP 401): set STT_API_KEY to a key it accepts.`;
    expect(await wrongKey.transcribe(pcm, {})).toEqual({ success: false, code: 'speech_unreachable', message: refusedKey });
    expect(await wrongKey.status()).toEqual({ state: 'failed', message: refusedKey, details: { url: server.url, model: 'whisper-1' } });

    const base = server.url.replace(/\/v1$/, '');
    expect(await new OpenAiSpeechToText({ url: base, model: 'whisper-1', apiKey: 'right' }).transcribe(pcm, {})).toEqual({
      success: false,
      code: 'speech_unreachable',
      message: `The OpenAI-compatible speech server at ${base} has no such endpoint (HTTP 404): the URL must be the base that ends before /audio, e.g. http://host:8000/v1.`,
    });

    const dead = await deadUrl();
    const refused = `The OpenAI-compatible speech server at ${dead} refused the connection: is the server (speaches, LocalAI, whisper.cpp, Kokoro-FastAPI…) running, and on that port?`;
    const gone = new OpenAiSpeechToText({ url: dead, model: 'whisper-1', apiKey: '' });
    expect(await gone.transcribe(pcm, {})).toEqual({ success: false, code: 'speech_unreachable', message: refused });
    expect(await gone.status()).toEqual({ state: 'failed', message: refused, details: { url: dead, model: 'whisper-1' } });
  });

  it('never shows a login written into the URL', async () => {
    const dead = await deadUrl();
    const withLogin = dead.replace('http://', 'http://user:hunter2@');
    const result = await new OpenAiSpeechToText({ url: withLogin, model: 'whisper-1', apiKey: '' }).transcribe(pcm, {});
    expect(result.success).toBe(false);
    expect(JSON.stringify(result)).not.toContain('hunter2');
  });
});

describe('OpenAI-compatible text to speech', () => {
  it('asks for the model, voice and format (ogg_opus as "opus"), and hands back the bytes as sent', async () => {
    const server = await standIn();
    const tts = new OpenAiTextToSpeech({ url: server.url, model: 'kokoro', apiKey: '', voice: '' });
    const ogg = await tts.synthesize('Good night.', { format: 'ogg_opus', voice: 'af_sky' });
    expect(ogg.success && ogg.audio.mimeType).toBe('audio/ogg');
    expect(ogg.success && ogg.audio.bytes.subarray(0, 4).toString('latin1')).toBe('OggS');
    await tts.synthesize('Again.', { format: 'mp3' });
    expect(server.speeches).toMatchObject([
      { model: 'kokoro', input: 'Good night.', voice: 'af_sky', responseFormat: 'opus' },
      // No voice set anywhere: OpenAI's first voice, which the API requires.
      { model: 'kokoro', input: 'Again.', voice: 'alloy', responseFormat: 'mp3' },
    ]);
  });
});
