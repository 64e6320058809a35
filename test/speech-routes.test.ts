import { afterEach, expect, it } from 'vitest';
import { addPerson, signInOwner } from './support/people.ts';
import { type Hearth, useHearth } from './support/hearth-server.ts';
import { startOpenAiAudioStandIn, type OpenAiAudioStandIn } from './support/openai-audio-stand-in.ts';
import { encodedTone, toneWav } from './support/tone.ts';
import { describeWithVoiceTools } from './support/voice-tools.ts';
import { startWyomingStandIn, type WyomingStandIn } from './support/wyoming-stand-in.ts';

// The voice routes through the whole server (docs/protocol.md, "Voice"); the backends in detail are in test/internals/speech-*.test.ts.

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});
const start = useHearth();

async function wyoming(options: Parameters<typeof startWyomingStandIn>[0] = {}): Promise<WyomingStandIn> {
  const standIn = await startWyomingStandIn(options);
  cleanups.push(() => standIn.close());
  return standIn;
}

async function openAiAudio(options: Parameters<typeof startOpenAiAudioStandIn>[0] = {}): Promise<OpenAiAudioStandIn> {
  const standIn = await startOpenAiAudioStandIn(options);
  cleanups.push(() => standIn.close());
  return standIn;
}

async function postAudio(hearth: Hearth, sessionId: string, body: Buffer | FormData, options: { type?: string; query?: string; headers?: Record<string, string> } = {}) {
  const response = await fetch(`${hearth.baseUrl}/sessions/${sessionId}/audio${options.query ?? ''}`, {
    method: 'POST',
    headers: { ...(options.type !== undefined && { 'content-type': options.type }), ...options.headers },
    body: Buffer.isBuffer(body) ? new Uint8Array(body) : body,
  });
  return { status: response.status, body: (await response.json()) as any };
}

async function postSpeech(hearth: Hearth, body: unknown, headers: Record<string, string> = {}) {
  const response = await fetch(`${hearth.baseUrl}/speech`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
  const bytes = Buffer.from(await response.arrayBuffer());
  return { status: response.status, type: response.headers.get('content-type'), retryAfter: response.headers.get('retry-after'), bytes, json: () => JSON.parse(bytes.toString('utf8')) as any };
}

describeWithVoiceTools('POST /sessions/:id/audio', () => {
  it('transcribes a recording through Wyoming and sends it as the person\'s message, which the scripted LLM answers', async () => {
    const server = await wyoming({ transcript: 'What is the weather like' });
    const hearth = await start({ env: { STT_BACKEND: 'wyoming', STT_URL: server.url } });
    hearth.llm.script({ content: 'Sunny, all day.' });
    const sessionId = await hearth.createSession();
    const socket = await hearth.connect(sessionId);

    const response = await postAudio(hearth, sessionId, encodedTone('webm', 1), { type: 'audio/webm;codecs=opus' });

    expect(response.status).toBe(200);
    expect(response.body).toEqual({ transcript: 'What is the weather like', seconds: expect.closeTo(1, 0), sent: true });
    const end = await socket.next('stream_end');
    expect(end.content).toBe('Sunny, all day.');
    const asked = hearth.llm.requests[0]!.body.messages.at(-1);
    expect(asked).toMatchObject({ role: 'user', content: 'What is the weather like' });
    // What the speech server got: 16 kHz mono s16le, as many samples as the second of audio sent.
    const [received] = server.transcriptions;
    expect(received!.start).toMatchObject({ rate: 16_000, width: 2, channels: 1 });
    expect(received!.pcm.length / 32_000).toBeCloseTo(1, 1);
    const messages = (await hearth.request('GET', `/sessions/${sessionId}`)).body.messages;
    expect(messages.map((message: { role: string; content: string }) => [message.role, message.content])).toEqual([
      ['user', 'What is the weather like'],
      ['assistant', 'Sunny, all day.'],
    ]);
    socket.close();
  });

  it('only transcribes with ?send=false, taking the multipart field "audio", through an OpenAI-compatible server with its key', async () => {
    const server = await openAiAudio({ apiKey: 'stt-key', transcript: 'Just the words' });
    const hearth = await start({ env: { STT_BACKEND: 'openai', STT_URL: server.url, STT_API_KEY: 'stt-key', STT_LANGUAGE: 'en' } });
    const sessionId = await hearth.createSession();
    const form = new FormData();
    form.append('audio', new Blob([new Uint8Array(encodedTone('opus', 1))], { type: 'audio/ogg' }), 'note.ogg');

    const response = await postAudio(hearth, sessionId, form, { query: '?send=false' });

    expect(response).toEqual({ status: 200, body: { transcript: 'Just the words', seconds: expect.closeTo(1, 0), sent: false } });
    expect(hearth.llm.requests).toHaveLength(0);
    expect(server.transcriptions).toEqual([
      expect.objectContaining({ model: 'whisper-1', language: 'en', fileName: 'speech.wav', fileType: 'audio/wav', authorization: 'Bearer stt-key' }),
    ]);
    expect(server.transcriptions[0]!.bytes.subarray(0, 4).toString('latin1')).toBe('RIFF');
    const integrations = (await hearth.request('GET', '/integrations')).body.integrations;
    const speechToText = integrations.find((entry: { name: string }) => entry.name === 'speech_to_text');
    expect(speechToText).toEqual({ name: 'speech_to_text', status: 'connected', details: { backend: 'openai', url: server.url, model: 'whisper-1' } });
    expect(JSON.stringify(integrations)).not.toContain('stt-key');
  });

  it('answers 503 stt_not_configured without STT, before reading the body', async () => {
    const hearth = await start();
    const sessionId = await hearth.createSession();
    const response = await postAudio(hearth, sessionId, toneWav(0.5), { type: 'audio/wav' });
    expect(response.status).toBe(503);
    expect(response.body.error).toEqual({ code: 'stt_not_configured', message: expect.stringContaining('STT_BACKEND') });
  });

  it('answers 503 speech_unreachable with the fix when the Wyoming server is gone, and marks it failed', async () => {
    const server = await wyoming();
    const url = server.url;
    await server.close();
    const hearth = await start({ env: { STT_BACKEND: 'wyoming', STT_URL: url } });
    const sessionId = await hearth.createSession();
    const response = await postAudio(hearth, sessionId, toneWav(0.5), { type: 'audio/wav' });
    expect(response.status).toBe(503);
    expect(response.body.error).toEqual({ code: 'speech_unreachable', message: `Wyoming server at ${url} refused the connection: is wyoming-faster-whisper running, and on that port?` });
    const status = (await hearth.request('GET', '/integrations')).body.integrations.find((entry: { name: string }) => entry.name === 'speech_to_text');
    expect(status).toMatchObject({ status: 'failed', message: response.body.error.message });
  });

  it('refuses audio larger than the upload limit, longer than VOICE_MAX_SECONDS, or unreadable', async () => {
    const server = await wyoming();
    const hearth = await start({ env: { STT_BACKEND: 'wyoming', STT_URL: server.url, SESSION_FILES_MAX_SIZE_MB: '1', VOICE_MAX_SECONDS: '2' } });
    const sessionId = await hearth.createSession();

    const large = await postAudio(hearth, sessionId, toneWav(40), { type: 'audio/wav' });
    expect(large.status).toBe(413);
    expect(large.body.error).toEqual({ code: 'audio_too_large', message: expect.stringContaining('1 MB (SESSION_FILES_MAX_SIZE_MB)') });

    const long = await postAudio(hearth, sessionId, encodedTone('mp3', 4), { type: 'audio/mpeg' });
    expect(long.status).toBe(413);
    expect(long.body.error).toEqual({ code: 'audio_too_long', message: 'The recording is longer than 2 s (VOICE_MAX_SECONDS); send a shorter one.' });

    const unreadable = await postAudio(hearth, sessionId, Buffer.from('these are words, not sound'.repeat(20)), { type: 'audio/webm' });
    expect(unreadable.status).toBe(400);
    expect(unreadable.body.error).toEqual({ code: 'audio_unreadable', message: expect.stringMatching(/^The audio could not be read \(ffmpeg: .+\)/) });
    expect(server.transcriptions).toHaveLength(0);
    expect(hearth.llm.requests).toHaveLength(0);
  });

  it('needs a signed-in person once the household has several, and answers 404 for another person\'s session as for a missing one', async () => {
    const server = await wyoming();
    const hearth = await start({ env: { STT_BACKEND: 'wyoming', STT_URL: server.url } });
    await signInOwner(hearth);
    const ada = await addPerson(hearth, { role: 'adult', name: 'Ada' });
    const bo = await addPerson(hearth, { role: 'adult', name: 'Bo' });
    const adaSession = await ada.createSession();

    const anonymous = await postAudio(hearth, adaSession, toneWav(0.5), { type: 'audio/wav' });
    expect(anonymous.status).toBe(401);
    const another = await postAudio(hearth, adaSession, toneWav(0.5), { type: 'audio/wav', headers: bo.tokenHeaders });
    expect(another).toEqual({ status: 404, body: { error: { code: 'session_not_found', message: `No session with id ${adaSession}.` } } });
    expect(server.transcriptions).toHaveLength(0);
    const own = await postAudio(hearth, adaSession, toneWav(0.5), { type: 'audio/wav', query: '?send=false', headers: ada.tokenHeaders });
    expect(own.status).toBe(200);
  });
});

describeWithVoiceTools('POST /speech', () => {
  it('speaks the text with espeak-ng in the asked format', async () => {
    const hearth = await start({ env: { TTS_BACKEND: 'espeak-ng' } });
    const mp3 = await postSpeech(hearth, { text: 'Hello from Hearth' });
    expect(mp3.status).toBe(200);
    expect(mp3.type).toBe('audio/mpeg');
    expect(isMp3(mp3.bytes)).toBe(true);
    const ogg = await postSpeech(hearth, { text: 'Hello from Hearth', format: 'ogg_opus' });
    expect(ogg.type).toBe('audio/ogg');
    expect(ogg.bytes.subarray(0, 4).toString('latin1')).toBe('OggS');
    expect(ogg.bytes.includes(Buffer.from('OpusHead'))).toBe(true);
  });

  it('asks an OpenAI-compatible server for the voice and format', async () => {
    const server = await openAiAudio({ apiKey: 'tts-key' });
    const hearth = await start({ env: { TTS_BACKEND: 'openai', TTS_URL: server.url, TTS_API_KEY: 'tts-key', TTS_VOICE: 'nova' } });
    const wav = await postSpeech(hearth, { text: 'One sentence.', format: 'wav' });
    expect(wav.status).toBe(200);
    expect(wav.type).toBe('audio/wav');
    expect(wav.bytes.subarray(0, 4).toString('latin1')).toBe('RIFF');
    await postSpeech(hearth, { text: 'Another.', voice: 'echo' });
    expect(server.speeches).toEqual([
      { model: 'tts-1', input: 'One sentence.', voice: 'nova', responseFormat: 'wav', authorization: 'Bearer tts-key' },
      { model: 'tts-1', input: 'Another.', voice: 'echo', responseFormat: 'mp3', authorization: 'Bearer tts-key' },
    ]);
  });

  it('refuses a person over the rate with 429 and Retry-After, while another person is still served', async () => {
    const server = await openAiAudio();
    const hearth = await start({ env: { TTS_BACKEND: 'openai', TTS_URL: server.url } });
    await signInOwner(hearth);
    const ada = await addPerson(hearth, { role: 'adult', name: 'Ada' });
    const bo = await addPerson(hearth, { role: 'adult', name: 'Bo' });
    // 60 at once, then 2 a second: asked faster than that, the first refusal comes soon after the 60th.
    let served = 0;
    let refused: Awaited<ReturnType<typeof postSpeech>> | undefined;
    while (refused === undefined && served < 300) {
      const response = await postSpeech(hearth, { text: `Sentence ${served}.` }, ada.tokenHeaders);
      if (response.status === 200) served += 1;
      else refused = response;
    }
    expect(served).toBeGreaterThanOrEqual(60);
    expect(refused?.status).toBe(429);
    expect(refused?.json().error.code).toBe('rate_limited');
    expect(Number(refused?.retryAfter)).toBeGreaterThan(0);
    expect(server.speeches).toHaveLength(served);
    expect((await postSpeech(hearth, { text: 'Hello.' }, bo.tokenHeaders)).status).toBe(200);
  });

  it('answers 503 tts_not_configured without TTS, and 400 for text too long', async () => {
    const hearth = await start({ env: { TTS_BACKEND: 'none' } });
    const refused = await postSpeech(hearth, { text: 'Hello' });
    expect(refused.status).toBe(503);
    expect(refused.json().error).toEqual({ code: 'tts_not_configured', message: expect.stringContaining('TTS_BACKEND') });
    const spoken = await start({ env: { TTS_BACKEND: 'espeak-ng' } });
    const long = await postSpeech(spoken, { text: 'a'.repeat(4_001) });
    expect(long.status).toBe(400);
    expect(long.json().error.code).toBe('invalid_request');
  });
});

/** An MP3 starts with an ID3 tag or a frame sync. */
function isMp3(bytes: Buffer): boolean {
  return bytes.subarray(0, 3).toString('latin1') === 'ID3' || (bytes[0] === 0xff && (bytes[1]! & 0xe0) === 0xe0);
}
