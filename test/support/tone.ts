import { spawnSync } from 'node:child_process';
import { wavFromPcm } from '../../src/speech/wav.ts';

/** `seconds` of a sine tone as 16-bit mono PCM at `rate`: a stand-in's "speech", loud enough to be non-silent. */
export function tonePcm(seconds: number, rate: number, frequency = 440): Buffer {
  const samples = Math.round(seconds * rate);
  const pcm = Buffer.alloc(samples * 2);
  for (let index = 0; index < samples; index += 1) pcm.writeInt16LE(Math.round(Math.sin((2 * Math.PI * frequency * index) / rate) * 12_000), index * 2);
  return pcm;
}

/** The tone as a WAV file. */
export function toneWav(seconds: number, rate = 16_000, frequency = 440): Buffer {
  return wavFromPcm(tonePcm(seconds, rate, frequency), { rate, width: 2, channels: 1 });
}

const encoded = new Map<string, Buffer>();

/** The tone encoded by ffmpeg as `mp3`, `opus` (OGG/Opus) or `webm` (WebM/Opus, as a browser records), made once per format. */
export function encodedTone(format: 'mp3' | 'opus' | 'webm', seconds = 1): Buffer {
  const key = `${format}:${seconds}`;
  const known = encoded.get(key);
  if (known) return known;
  const codec = format === 'mp3' ? ['-c:a', 'libmp3lame', '-f', 'mp3'] : format === 'opus' ? ['-c:a', 'libopus', '-ar', '48000', '-f', 'ogg'] : ['-c:a', 'libopus', '-ar', '48000', '-f', 'webm'];
  const result = spawnSync('ffmpeg', ['-hide_banner', '-loglevel', 'error', '-i', 'pipe:0', ...codec, 'pipe:1'], { input: toneWav(seconds, 24_000), maxBuffer: 16 * 1024 * 1024 });
  if (result.status !== 0) throw new Error(`ffmpeg could not make the ${format} tone: ${result.stderr.toString()}`);
  encoded.set(key, result.stdout);
  return result.stdout;
}
