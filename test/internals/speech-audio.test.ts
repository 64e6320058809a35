import { execFile } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { readdirSync, readFileSync } from 'node:fs';
import { afterAll, expect, it } from 'vitest';
import { parseConfig } from '../../src/config.ts';
import { AudioConverter } from '../../src/speech/audio-convert.ts';
import { runJailedFilter } from '../../src/jail/jailed-filter.ts';
import { EspeakTextToSpeech } from '../../src/speech/espeak-speech.ts';
import { jailFor } from '../support/jail.ts';
import { encodedTone, toneWav } from '../support/tone.ts';
import { describeWithVoiceTools } from '../support/voice-tools.ts';
import { waitUntil } from '../support/wait-until.ts';

// ffmpeg and espeak-ng for real, in the strict jail as Hearth runs them.

const run = promisify(execFile);
const jail = jailFor(parseConfig({}));
const converter = new AudioConverter({ jail });
const scratch = await mkdtemp(path.join(tmpdir(), 'hearth-speech-'));
afterAll(async () => {
  converter.close();
  jail.close();
  await rm(scratch, { recursive: true, force: true });
});

async function saved(bytes: Buffer, name: string): Promise<string> {
  const file = path.join(scratch, name);
  await writeFile(file, bytes);
  return file;
}

/** ffprobe's view of a file: its container, first stream's codec, channels, rate and duration. */
async function probe(file: string): Promise<{ format: string; codec: string; channels: number; rate: number; seconds: number }> {
  const { stdout } = await run('ffprobe', ['-v', 'error', '-show_entries', 'format=format_name,duration:stream=codec_name,channels,sample_rate', '-of', 'json', file]);
  const info = JSON.parse(stdout) as { format: { format_name: string; duration: string }; streams: Array<{ codec_name: string; channels: number; sample_rate: string }> };
  const [stream] = info.streams;
  return { format: info.format.format_name, codec: stream!.codec_name, channels: stream!.channels, rate: Number(stream!.sample_rate), seconds: Number(info.format.duration) };
}

/** sox's RMS amplitude (0–1) of a WAV file. */
async function rmsAmplitude(file: string): Promise<number> {
  const { stderr } = await run('sox', [file, '-n', 'stat']);
  const match = /RMS\s+amplitude:\s+([\d.]+)/.exec(stderr);
  if (!match) throw new Error(`no RMS amplitude in sox's stat: ${stderr}`);
  return Number(match[1]);
}

describeWithVoiceTools('espeak-ng', () => {
  const espeak = new EspeakTextToSpeech({ jail, converter, voice: '' });
  afterAll(() => espeak.close());

  it('speaks "Hello from Hearth" audibly, for as long as the words take, in WAV, MP3 and OGG/Opus', async () => {
    const wav = await espeak.synthesize('Hello from Hearth', { format: 'wav' });
    if (!wav.success) throw new Error(wav.message);
    const wavFile = await saved(wav.audio.bytes, 'hello.wav');
    expect(await probe(wavFile)).toMatchObject({ format: 'wav', codec: 'pcm_s16le', channels: 1, rate: 24_000 });
    expect(await rmsAmplitude(wavFile)).toBeGreaterThan(0.02);
    expect(wav.seconds).toBeGreaterThan(0.3);
    expect(wav.seconds).toBeLessThan(3);

    const mp3 = await espeak.synthesize('Hello from Hearth', { format: 'mp3' });
    if (!mp3.success) throw new Error(mp3.message);
    expect(mp3.audio.mimeType).toBe('audio/mpeg');
    const mp3Info = await probe(await saved(mp3.audio.bytes, 'hello.mp3'));
    expect(mp3Info).toMatchObject({ format: 'mp3', codec: 'mp3', channels: 1 });
    expect(mp3Info.seconds).toBeGreaterThan(0.3);
    expect(mp3Info.seconds).toBeLessThan(3);

    const ogg = await espeak.synthesize('Hello from Hearth', { format: 'ogg_opus' });
    if (!ogg.success) throw new Error(ogg.message);
    expect(ogg.audio.mimeType).toBe('audio/ogg');
    const oggFile = await saved(ogg.audio.bytes, 'hello.ogg');
    expect(await probe(oggFile)).toMatchObject({ format: 'ogg', codec: 'opus', channels: 1, rate: 48_000 });
    // Decoded back, the voice note is as loud as the speech it came from.
    await run('ffmpeg', ['-v', 'error', '-i', oggFile, path.join(scratch, 'hello-back.wav')]);
    expect(await rmsAmplitude(path.join(scratch, 'hello-back.wav'))).toBeGreaterThan(0.02);
  });

  it('takes a longer text longer, takes text beginning with a dash as words, and names a voice it lacks', async () => {
    const short = await espeak.synthesize('Hi.', { format: 'wav' });
    const long = await espeak.synthesize('-v is not an option here. This sentence is a good deal longer than the first one was.', { format: 'wav' });
    if (!short.success || !long.success) throw new Error('espeak-ng failed');
    expect(long.seconds!).toBeGreaterThan(short.seconds! * 3);
    expect(await espeak.synthesize('Hello', { format: 'mp3', voice: 'xx-nowhere' })).toEqual({
      success: false,
      code: 'speech_failed',
      message: 'espeak-ng has no voice "xx-nowhere" (espeak-ng --voices lists them; set TTS_VOICE).',
    });
    expect(await espeak.synthesize('Hello', { format: 'mp3', voice: '--stdout' })).toMatchObject({ success: false, code: 'speech_failed' });
    expect(await espeak.status()).toEqual({ state: 'connected', details: { voice: 'default' } });
  });
});

describeWithVoiceTools('the audio converter', () => {
  it('decodes a browser\'s WebM/Opus to 16 kHz mono s16le of the same length', async () => {
    const decoded = await converter.toSpeechPcm({ bytes: encodedTone('webm', 1.5), mimeType: 'audio/webm;codecs=opus' }, { maxSeconds: 120 });
    if (!decoded.success) throw new Error(decoded.message);
    expect(decoded.seconds).toBeCloseTo(1.5, 1);
    expect(decoded.pcm.length).toBe(Math.round(decoded.seconds * 16_000) * 2);
    const wav = toneWav(0);
    const file = await saved(Buffer.concat([wav.subarray(0, 40), Buffer.alloc(4), decoded.pcm]), 'decoded.wav');
    await run('sox', ['--ignore-length', file, path.join(scratch, 'decoded-fixed.wav')]);
    expect(await rmsAmplitude(path.join(scratch, 'decoded-fixed.wav'))).toBeGreaterThan(0.1);
  });

  it('refuses a recording longer than the limit, and one ffmpeg cannot read with its reason', async () => {
    expect(await converter.toSpeechPcm({ bytes: encodedTone('mp3', 3), mimeType: 'audio/mpeg' }, { maxSeconds: 2 })).toEqual({
      success: false,
      code: 'audio_too_long',
      message: 'The recording is longer than 2 s (VOICE_MAX_SECONDS); send a shorter one.',
    });
    const unreadable = await converter.toSpeechPcm({ bytes: Buffer.from('no sound here at all '.repeat(30)), mimeType: 'audio/webm' }, { maxSeconds: 2 });
    expect(unreadable).toEqual({
      success: false,
      code: 'audio_unreadable',
      message: 'The audio could not be read (ffmpeg: Invalid data found when processing input). Send WAV, MP3, OGG/Opus, WebM or M4A audio.',
    });
  });

  it('ends ffmpeg at its timeout and when aborted', async () => {
    const slow = new AudioConverter({ jail, timeoutMs: 1 });
    expect(await slow.encode({ bytes: toneWav(5), mimeType: 'audio/wav' }, 'mp3')).toEqual({
      success: false,
      code: 'speech_failed',
      message: 'ffmpeg took longer than 0.001 s to encode the audio and was stopped.',
    });
    const controller = new AbortController();
    const encoding = converter.encode({ bytes: toneWav(30), mimeType: 'audio/wav' }, 'ogg_opus', { signal: controller.signal });
    controller.abort();
    expect(await encoding).toEqual({ success: false, code: 'speech_failed', message: 'Stopped before the audio was converted.' });
  });

  it.runIf(jail.active)('runs ffmpeg without network: it cannot fetch a URL it is handed', async () => {
    let requests = 0;
    const server = createServer((_request, response) => {
      requests += 1;
      response.end(toneWav(1));
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/tone.wav`;
    const result = await runJailedFilter({ executable: 'ffmpeg', args: ['-v', 'error', '-i', url, '-f', 's16le', 'pipe:1'], input: Buffer.alloc(0), jail, timeoutMs: 10_000, maxOutputBytes: 1_000_000 });
    server.close();
    expect(result.ok).toBe(false);
    expect(requests).toBe(0);
  });
});

/** The cpu share written for a jailed call's control group, read before anything runs in it; undefined where the jail has no cpu group. */
async function cpuShareOf(interactive: boolean): Promise<string | undefined> {
  const command = await jail.wrap('/bin/true', [], { kind: 'strict', writable: [], cwd: '/tmp', network: false, interactive }, { PATH: '/usr/bin:/bin' });
  try {
    const cpuGroup = command.args.find((argument) => /\/cpu[^/]*\/.*cgroup\.procs$/.test(argument) || (/cgroup\.procs$/.test(argument) && !/\/(pids|memory)\//.test(argument)));
    if (cpuGroup === undefined) return undefined;
    const folder = path.dirname(cpuGroup);
    for (const file of ['cpu.shares', 'cpu.weight']) {
      try {
        return `${file}=${readFileSync(path.join(folder, file), 'utf8').trim()}`;
      } catch {
        // The other cgroup version's file.
      }
    }
    return undefined;
  } finally {
    command.release();
  }
}

it.runIf(jail.active)('gives the audio tools a person\'s share of the processor (interactive), other jailed calls a tenth', async () => {
  const interactive = await cpuShareOf(true);
  const background = await cpuShareOf(false);
  if (interactive === undefined) return expect(background).toBeUndefined();
  expect([interactive, background]).toEqual(interactive.startsWith('cpu.shares') ? ['cpu.shares=1024', 'cpu.shares=102'] : ['cpu.weight=100', 'cpu.weight=10']);
});

/** Processes whose command line holds `-t <seconds>`: the decoder of that limit, found by it. */
function decodersOf(limit: string): number[] {
  const found: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const words = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0');
      if (words.some((word) => word.endsWith('ffmpeg')) && words.includes('-t') && words.includes(limit)) found.push(Number(entry));
    } catch {
      // Ended meanwhile.
    }
  }
  return found;
}

describeWithVoiceTools('the decoder kept ready', () => {
  it('waits started before the first recording, serves it, starts the next, and ends with close()', async () => {
    const ready = new AudioConverter({ jail });
    // An odd limit, so this test's ffmpeg is told from any other's by its command line.
    ready.prepare(7.25);
    // The jail's outer processes carry the same command line: the waiting decoder is one to three processes.
    await waitUntil(() => decodersOf('7.75').length > 0);
    const waiting = new Set(decodersOf('7.75'));
    const decoded = await ready.toSpeechPcm({ bytes: encodedTone('webm', 1), mimeType: 'audio/webm' }, { maxSeconds: 7.25 });
    expect(decoded.success).toBe(true);
    await waitUntil(() => decodersOf('7.75').some((pid) => !waiting.has(pid)));
    ready.close();
    await waitUntil(() => decodersOf('7.75').length === 0);
  });
});
