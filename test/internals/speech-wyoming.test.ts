import { createServer, type Server } from 'node:net';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config.ts';
import { IntegrationRegistry } from '../../src/integrations/integration-registry.ts';
import { AudioConverter } from '../../src/speech/audio-convert.ts';
import { configuredSpeech } from '../../src/speech/configured-speech.ts';
import { pcmMimeType } from '../../src/speech/wav.ts';
import { encodeWyomingEvent, WyomingEventReader, WyomingProtocolError } from '../../src/speech/wyoming-framing.ts';
import { WyomingSpeechToText, WyomingTextToSpeech } from '../../src/speech/wyoming-speech.ts';
import { jailFor } from '../support/jail.ts';
import { freeLoopbackPort } from '../support/loopback-port.ts';
import { encodedTone, tonePcm } from '../support/tone.ts';
import { describeWithVoiceTools } from '../support/voice-tools.ts';
import { standInSpeechRate, startWyomingStandIn, type WyomingStandIn, type WyomingStandInOptions } from '../support/wyoming-stand-in.ts';

const closers: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});

async function standIn(options: WyomingStandInOptions = {}): Promise<WyomingStandIn> {
  const server = await startWyomingStandIn(options);
  closers.push(() => server.close());
  return server;
}

function converter(): AudioConverter {
  const jail = jailFor(parseConfig({}));
  const made = new AudioConverter({ jail });
  closers.push(() => {
    made.close();
    jail.close();
  });
  return made;
}


/** A TCP server that answers every connection with `bytes` and leaves it open. */
async function rawServer(bytes: Buffer): Promise<string> {
  const server: Server = createServer((socket) => {
    socket.on('error', () => undefined);
    socket.write(bytes);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  closers.push(() => {
    server.close();
  });
  return `tcp://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

const pcmClip = (seconds: number) => ({ bytes: tonePcm(seconds, 16_000), mimeType: pcmMimeType });

describe('the Wyoming framing', () => {
  it('reads events however the stream is cut, one byte a packet included', () => {
    const payload = Buffer.from([0, 1, 2, 3, 10, 10, 255]);
    const stream = Buffer.concat([
      encodeWyomingEvent({ type: 'audio-start', data: { rate: 16_000, width: 2, channels: 1 } }),
      encodeWyomingEvent({ type: 'audio-chunk', data: { rate: 16_000, width: 2, channels: 1 }, payload }),
      encodeWyomingEvent({ type: 'audio-stop' }),
      // Data in the header and in the data section, merged with the section's on top (as the protocol says).
      Buffer.from('{"type":"transcript","data":{"text":"old","language":"en"},"data_length":14}\n{"text":"new"}'),
    ]);
    const expected = [
      { type: 'audio-start', data: { rate: 16_000, width: 2, channels: 1 } },
      { type: 'audio-chunk', data: { rate: 16_000, width: 2, channels: 1 }, payload },
      { type: 'audio-stop', data: {} },
      { type: 'transcript', data: { text: 'new', language: 'en' } },
    ];
    for (const size of [1, 2, 5, 64, stream.length]) {
      const reader = new WyomingEventReader();
      const events = [];
      for (let offset = 0; offset < stream.length; offset += size) events.push(...reader.push(stream.subarray(offset, offset + size)));
      expect(events, `packets of ${size} bytes`).toEqual(expected);
    }
  });

  it('writes the header line with data_length and payload_length, then the data, then the payload', () => {
    const bytes = encodeWyomingEvent({ type: 'audio-chunk', data: { rate: 16_000 }, payload: Buffer.from('PCM') });
    const newline = bytes.indexOf('\n');
    const header = JSON.parse(bytes.subarray(0, newline).toString());
    expect(header).toMatchObject({ type: 'audio-chunk', data_length: 14, payload_length: 3 });
    expect(bytes.subarray(newline + 1).toString()).toBe('{"rate":16000}PCM');
  });

  it('refuses what is not the framing', () => {
    expect(() => new WyomingEventReader().push(Buffer.from('HTTP/1.1 400 Bad Request\r\n'))).toThrow(WyomingProtocolError);
    expect(() => new WyomingEventReader().push(Buffer.from('{"type":"audio-chunk","payload_length":-4}\n'))).toThrow(WyomingProtocolError);
    expect(() => new WyomingEventReader().push(Buffer.from('{"data":{}}\n'))).toThrow(WyomingProtocolError);
  });
});

describe('Wyoming speech to text', () => {
  it('sends transcribe, audio-start, one-second chunks of 16 kHz mono s16le and audio-stop, and reads the transcript from split packets', async () => {
    const server = await standIn({ transcript: 'Turn on the kitchen light', packetBytes: 3 });
    const stt = new WyomingSpeechToText({ url: server.url });
    const result = await stt.transcribe(pcmClip(2.5), { language: 'en' });
    expect(result).toEqual({ success: true, text: 'Turn on the kitchen light', seconds: 2.5 });
    const [received] = server.transcriptions;
    expect(received!.language).toBe('en');
    expect(received!.start).toMatchObject({ rate: 16_000, width: 2, channels: 1 });
    expect(received!.chunkFormats).toHaveLength(3);
    expect(received!.chunkFormats.every((format) => format.rate === 16_000 && format.width === 2 && format.channels === 1)).toBe(true);
    expect(received!.pcm.equals(tonePcm(2.5, 16_000))).toBe(true);
  });

  it('says connected when the server describes a speech-to-text service, and what to fix when it offers only text to speech', async () => {
    const whisper = await standIn();
    expect(await new WyomingSpeechToText({ url: whisper.url }).status()).toEqual({
      state: 'connected',
      details: { url: whisper.url, programs: ['stand-in-whisper'], models: ['tiny-int8'] },
    });
    const piper = await standIn({ offers: ['tts'] });
    expect(await new WyomingSpeechToText({ url: piper.url }).status()).toEqual({
      state: 'failed',
      message: `The Wyoming server at ${piper.url} offers no speech to text (it offers tts): is STT_URL the port of wyoming-faster-whisper?`,
      details: { url: piper.url },
    });
  });

  it('names a dead port, a server that is not Wyoming and a Wyoming error in words', async () => {
    const port = await freeLoopbackPort();
    const dead = new WyomingSpeechToText({ url: `tcp://127.0.0.1:${port}` });
    const refused = `Wyoming server at tcp://127.0.0.1:${port} refused the connection: is wyoming-faster-whisper running, and on that port?`;
    expect(await dead.transcribe(pcmClip(0.2), {})).toEqual({ success: false, code: 'speech_unreachable', message: refused });
    expect(await dead.status()).toEqual({ state: 'failed', message: refused, details: { url: `tcp://127.0.0.1:${port}` } });

    const http = await rawServer(Buffer.from('HTTP/1.1 400 Bad Request\r\n\r\n'));
    expect(await new WyomingSpeechToText({ url: http }).transcribe(pcmClip(0.2), {})).toEqual({
      success: false,
      code: 'speech_failed',
      message: `The server at ${http} does not speak the Wyoming protocol (it sent a header line that is not JSON: HTTP/1.1 400 Bad Request\r): is STT_URL/TTS_URL the Wyoming port?`,
    });

    const failing = await standIn({ errorText: 'model not loaded' });
    expect(await new WyomingSpeechToText({ url: failing.url }).transcribe(pcmClip(0.2), {})).toEqual({
      success: false,
      code: 'speech_failed',
      message: `The Wyoming server at ${failing.url} answered with an error: model not loaded`,
    });
  });

  it('gives up at its timeout on a server that never answers, and at once when aborted', async () => {
    const silent = await rawServer(Buffer.alloc(0));
    const slow = new WyomingSpeechToText({ url: silent, timeoutMs: 300 });
    expect(await slow.transcribe(pcmClip(0.2), {})).toEqual({ success: false, code: 'speech_failed', message: `The Wyoming server at ${silent} did not finish within 0.3 s.` });
    const controller = new AbortController();
    const waiting = new WyomingSpeechToText({ url: silent }).transcribe(pcmClip(0.2), { signal: controller.signal });
    controller.abort();
    expect(await waiting).toEqual({ success: false, code: 'speech_failed', message: expect.stringMatching(/^Stopped before the Wyoming server (was asked|answered)\.$/) });
  });
});

describeWithVoiceTools('Wyoming text to speech', () => {
  it('turns synthesize\'s audio chunks into WAV as sent, or into MP3 and OGG/Opus through ffmpeg', async () => {
    const server = await standIn({ packetBytes: 1000, speechSeconds: 0.5 });
    const tts = new WyomingTextToSpeech({ url: server.url, converter: converter(), voice: 'en_US-lessac-medium' });
    const wav = await tts.synthesize('Hello', { format: 'wav' });
    expect(wav.success && wav.audio.mimeType).toBe('audio/wav');
    if (!wav.success) return;
    expect(wav.seconds).toBeCloseTo(0.5, 2);
    expect(wav.audio.bytes.readUInt32LE(24)).toBe(standInSpeechRate);
    expect(wav.audio.bytes.subarray(44).equals(tonePcm(0.5, standInSpeechRate))).toBe(true);
    const mp3 = await tts.synthesize('Hello', { format: 'mp3', voice: 'de_DE-thorsten-low' });
    expect(mp3.success && mp3.audio.mimeType).toBe('audio/mpeg');
    const ogg = await tts.synthesize('Hello', { format: 'ogg_opus' });
    expect(ogg.success && ogg.audio.bytes.subarray(0, 4).toString('latin1')).toBe('OggS');
    expect(server.syntheses).toEqual([
      { text: 'Hello', voice: 'en_US-lessac-medium' },
      { text: 'Hello', voice: 'de_DE-thorsten-low' },
      { text: 'Hello', voice: 'en_US-lessac-medium' },
    ]);
  });
});

describeWithVoiceTools('the configured Wyoming speech', () => {
  it('reports both statuses, transcribes any format through ffmpeg, and says what to fix for a URL of the wrong kind', async () => {
    const server = await standIn({ transcript: 'Good morning' });
    const jail = jailFor(parseConfig({}));
    closers.push(() => jail.close());
    const integrations = new IntegrationRegistry();
    const logger = pino({ level: 'silent' });
    const speech = await configuredSpeech({ config: parseConfig({ STT_BACKEND: 'wyoming', STT_URL: server.url, TTS_BACKEND: 'wyoming', TTS_URL: server.url }), integrations, logger, jail });
    await speech.check();
    expect(integrations.list().map(({ name, status }) => [name, status])).toEqual([
      ['speech_to_text', 'connected'],
      ['text_to_speech', 'connected'],
    ]);
    expect(speech.summary()).toBe('speech: STT wyoming (connected), TTS wyoming (connected)');
    expect(await speech.transcribe({ bytes: encodedTone('mp3', 1), mimeType: 'audio/mpeg' })).toEqual({ success: true, text: 'Good morning', seconds: expect.closeTo(1, 0) });

    const wrong = new IntegrationRegistry();
    const misconfigured = await configuredSpeech({ config: parseConfig({ STT_BACKEND: 'wyoming', STT_URL: 'http://127.0.0.1:10300', TTS_BACKEND: 'wyoming' }), integrations: wrong, logger, jail });
    await misconfigured.check();
    expect(wrong.list()).toEqual([
      { name: 'speech_to_text', status: 'failed', message: 'STT_BACKEND=wyoming needs a tcp://host:port URL in STT_URL, e.g. tcp://host:10300.', details: { backend: 'wyoming' } },
      { name: 'text_to_speech', status: 'failed', message: 'TTS_BACKEND=wyoming needs TTS_URL, e.g. TTS_URL=tcp://host:10200.', details: { backend: 'wyoming' } },
    ]);
    expect(await misconfigured.transcribe({ bytes: encodedTone('mp3', 1), mimeType: 'audio/mpeg' })).toMatchObject({ success: false, code: 'speech_unreachable' });
    speech.close();
    misconfigured.close();
  });
});
