/**
 * A Wyoming server on a free loopback port, speaking the protocol's published framing
 * (rhasspy/wyoming: a JSON header line, then `data_length` bytes of JSON data, then
 * `payload_length` bytes of payload) with its own reader and writer, not Hearth's:
 * `describe` → `info`, `transcribe` + `audio-start`/`audio-chunk`s/`audio-stop` → `transcript`
 * of a scripted text, `synthesize` → `audio-start`, `audio-chunk`s of a tone, `audio-stop`.
 * It records what it was sent, the PCM included, so tests can assert its format.
 */
import { once } from 'node:events';
import { createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { tonePcm } from './tone.ts';

export interface ReceivedTranscription {
  language?: string;
  /** audio-start's data: rate, width, channels. */
  start: Record<string, unknown>;
  /** Each audio-chunk's data. */
  chunkFormats: Array<Record<string, unknown>>;
  pcm: Buffer;
}

export interface ReceivedSynthesis {
  text: string;
  voice?: string;
}

export interface WyomingStandInOptions {
  /** What `transcript` says. */
  transcript?: string;
  /** Which services `info` offers. */
  offers?: Array<'asr' | 'tts'>;
  /** Writes each answer in pieces of this many bytes, one per turn of the event loop: the framing split across packets. */
  packetBytes?: number;
  /** Waited before each answer (subtracted in the bench). */
  delayMs?: number;
  /** Seconds of tone a synthesis answers, at 22 050 Hz mono s16le. */
  speechSeconds?: number;
  /** Answers every request with a Wyoming `error` event carrying this text. */
  errorText?: string;
}

export interface WyomingStandIn {
  /** tcp://127.0.0.1:<port> */
  url: string;
  port: number;
  transcriptions: ReceivedTranscription[];
  syntheses: ReceivedSynthesis[];
  describes: number;
  close(): Promise<void>;
}

interface Frame {
  type: string;
  data: Record<string, unknown>;
  payload: Buffer;
}

export const standInSpeechRate = 22_050;

export async function startWyomingStandIn(options: WyomingStandInOptions = {}): Promise<WyomingStandIn> {
  const state: WyomingStandIn = { url: '', port: 0, transcriptions: [], syntheses: [], describes: 0, close: async () => undefined };
  const sockets = new Set<Socket>();
  const server: Server = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => undefined);
    let buffer = Buffer.alloc(0);
    let current: ReceivedTranscription | undefined;
    let language: string | undefined;
    socket.on('data', (chunk: Buffer) => {
      buffer = Buffer.concat([buffer, chunk]);
      for (;;) {
        const taken = takeFrame(buffer);
        if (!taken) return;
        buffer = buffer.subarray(taken.used);
        void handle(taken.frame);
      }
    });
    const handle = async (frame: Frame) => {
      switch (frame.type) {
        case 'describe':
          state.describes += 1;
          await answer(socket, [{ type: 'info', data: info(options.offers ?? ['asr', 'tts']) }]);
          return;
        case 'transcribe':
          language = typeof frame.data.language === 'string' ? frame.data.language : undefined;
          return;
        case 'audio-start':
          current = { ...(language !== undefined && { language }), start: frame.data, chunkFormats: [], pcm: Buffer.alloc(0) };
          return;
        case 'audio-chunk':
          if (current) {
            current.chunkFormats.push(frame.data);
            current.pcm = Buffer.concat([current.pcm, frame.payload]);
          }
          return;
        case 'audio-stop':
          if (current) state.transcriptions.push(current);
          current = undefined;
          if (options.errorText !== undefined) return answer(socket, [{ type: 'error', data: { text: options.errorText, code: 'stand-in' } }]);
          return answer(socket, [{ type: 'transcript', data: { text: options.transcript ?? 'Hello from the Wyoming stand-in' } }]);
        case 'synthesize': {
          const voice = (frame.data.voice as { name?: string } | undefined)?.name;
          state.syntheses.push({ text: String(frame.data.text ?? ''), ...(voice !== undefined && { voice }) });
          if (options.errorText !== undefined) return answer(socket, [{ type: 'error', data: { text: options.errorText } }]);
          const format = { rate: standInSpeechRate, width: 2, channels: 1 };
          const pcm = tonePcm(options.speechSeconds ?? 0.5, standInSpeechRate);
          const chunkBytes = 4096;
          const chunks: Frame[] = [];
          for (let offset = 0; offset < pcm.length; offset += chunkBytes) chunks.push({ type: 'audio-chunk', data: format, payload: pcm.subarray(offset, offset + chunkBytes) });
          return answer(socket, [{ type: 'audio-start', data: format }, ...chunks, { type: 'audio-stop', data: {} }]);
        }
        default:
          return;
      }
    };
    const answer = async (target: Socket, frames: Array<Omit<Frame, 'payload'> & { payload?: Buffer }>) => {
      if (options.delayMs) await new Promise((resolve) => setTimeout(resolve, options.delayMs));
      const bytes = Buffer.concat(frames.map(writeFrame));
      if (!options.packetBytes) {
        target.write(bytes);
        return;
      }
      for (let offset = 0; offset < bytes.length; offset += options.packetBytes) {
        if (target.destroyed) return;
        target.write(bytes.subarray(offset, offset + options.packetBytes));
        await new Promise((resolve) => setImmediate(resolve));
      }
    };
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const port = (server.address() as AddressInfo).port;
  state.port = port;
  state.url = `tcp://127.0.0.1:${port}`;
  state.close = async () => {
    for (const socket of sockets) socket.destroy();
    server.close();
    await once(server, 'close');
  };
  return state;
}

function info(offers: Array<'asr' | 'tts'>): Record<string, unknown> {
  const attribution = { name: 'Hearth tests', url: 'https://example.invalid' };
  return {
    ...(offers.includes('asr') && { asr: [{ name: 'stand-in-whisper', attribution, installed: true, models: [{ name: 'tiny-int8', languages: ['en'], attribution, installed: true }] }] }),
    ...(offers.includes('tts') && { tts: [{ name: 'stand-in-piper', attribution, installed: true, models: [{ name: 'en_US-test-low', languages: ['en_US'], attribution, installed: true }] }] }),
  };
}

/** One whole frame from the front of the buffer, or undefined until it has arrived. */
function takeFrame(buffer: Buffer): { frame: Frame; used: number } | undefined {
  const lineEnd = buffer.indexOf('\n');
  if (lineEnd < 0) return undefined;
  const header = JSON.parse(buffer.subarray(0, lineEnd).toString('utf8')) as { type: string; data?: Record<string, unknown>; data_length?: number; payload_length?: number };
  const dataLength = header.data_length ?? 0;
  const payloadLength = header.payload_length ?? 0;
  const start = lineEnd + 1;
  if (buffer.length < start + dataLength + payloadLength) return undefined;
  const extra = dataLength > 0 ? (JSON.parse(buffer.subarray(start, start + dataLength).toString('utf8')) as Record<string, unknown>) : {};
  return {
    frame: { type: header.type, data: { ...(header.data ?? {}), ...extra }, payload: Buffer.from(buffer.subarray(start + dataLength, start + dataLength + payloadLength)) },
    used: start + dataLength + payloadLength,
  };
}

/** Data sent in the data section (as wyoming's Python writer does), never in the header. */
function writeFrame(frame: Omit<Frame, 'payload'> & { payload?: Buffer }): Buffer {
  const data = Buffer.from(JSON.stringify(frame.data), 'utf8');
  const payload = frame.payload ?? Buffer.alloc(0);
  const header = JSON.stringify({ type: frame.type, version: '1.5.3', data_length: data.length, ...(payload.length > 0 && { payload_length: payload.length }) });
  return Buffer.concat([Buffer.from(`${header}\n`), data, payload]);
}
