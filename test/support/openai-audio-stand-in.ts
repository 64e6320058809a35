/**
 * An OpenAI-compatible audio server on a free loopback port, as speaches, LocalAI or OpenAI answer
 * (https://platform.openai.com/docs/api-reference/audio): `POST /v1/audio/transcriptions` (multipart:
 * `file`, `model`, `language`…) answers `{text}` with a scripted transcript, `POST /v1/audio/speech`
 * `{model, input, voice, response_format}` answers a tone in the asked format, `GET /v1/models` lists
 * its models. It records every request and checks the API key when given one.
 */
import multipart from '@fastify/multipart';
import Fastify, { type FastifyInstance } from 'fastify';
import { encodedTone, toneWav } from './tone.ts';

export interface TranscriptionRequest {
  model: string;
  language?: string;
  fileName: string;
  fileType: string;
  bytes: Buffer;
  authorization?: string;
}

export interface SpeechRequest {
  model: string;
  input: string;
  voice: string;
  responseFormat: string;
  authorization?: string;
}

export interface OpenAiAudioStandInOptions {
  /** The key it accepts (`Authorization: Bearer <key>`); any or none when unset. */
  apiKey?: string;
  /** What a transcription answers; a function gets the request. */
  transcript?: string | ((request: TranscriptionRequest) => string);
  /** Waited before each answer, to stand for a real server's work (subtracted in the bench). */
  delayMs?: number;
  /** Seconds of tone a speech answer holds. */
  speechSeconds?: number;
}

export interface OpenAiAudioStandIn {
  /** The base URL to configure, ending in /v1. */
  url: string;
  transcriptions: TranscriptionRequest[];
  speeches: SpeechRequest[];
  /** Changes what the next transcriptions answer. */
  setTranscript(transcript: string): void;
  close(): Promise<void>;
}

const mimeTypes: Record<string, string> = { mp3: 'audio/mpeg', opus: 'audio/ogg', wav: 'audio/wav', aac: 'audio/aac', flac: 'audio/flac', pcm: 'audio/pcm' };

export async function startOpenAiAudioStandIn(options: OpenAiAudioStandInOptions = {}): Promise<OpenAiAudioStandIn> {
  const transcriptions: TranscriptionRequest[] = [];
  const speeches: SpeechRequest[] = [];
  let transcript = options.transcript ?? 'Hello from the stand-in';
  const app: FastifyInstance = Fastify();
  await app.register(multipart, { limits: { fileSize: 64 * 1024 * 1024 } });
  const delay = () => (options.delayMs ? new Promise((resolve) => setTimeout(resolve, options.delayMs)) : Promise.resolve());
  app.addHook('onRequest', async (request, reply) => {
    if (options.apiKey !== undefined && request.headers.authorization !== `Bearer ${options.apiKey}`) {
      return reply.code(401).send({ error: { message: 'Incorrect API key provided.', type: 'invalid_request_error', code: 'invalid_api_key' } });
    }
    return undefined;
  });
  app.get('/v1/models', async () => ({ object: 'list', data: [{ id: 'whisper-1', object: 'model' }, { id: 'tts-1', object: 'model' }] }));
  app.post('/v1/audio/transcriptions', async (request, reply) => {
    const fields: Record<string, string> = {};
    let file: { name: string; type: string; bytes: Buffer } | undefined;
    for await (const part of request.parts()) {
      if (part.type === 'file') file = { name: part.filename, type: part.mimetype, bytes: await part.toBuffer() };
      else fields[part.fieldname] = String(part.value);
    }
    if (!file || !fields.model) return reply.code(400).send({ error: { message: 'file and model are required', type: 'invalid_request_error' } });
    const recorded: TranscriptionRequest = {
      model: fields.model,
      ...(fields.language !== undefined && { language: fields.language }),
      fileName: file.name,
      fileType: file.type,
      bytes: file.bytes,
      ...(request.headers.authorization !== undefined && { authorization: request.headers.authorization }),
    };
    transcriptions.push(recorded);
    await delay();
    return { text: typeof transcript === 'function' ? transcript(recorded) : transcript };
  });
  app.post<{ Body: { model?: string; input?: string; voice?: string; response_format?: string } }>('/v1/audio/speech', async (request, reply) => {
    const { model, input, voice, response_format: responseFormat = 'mp3' } = request.body ?? {};
    if (!model || !input || !voice) return reply.code(400).send({ error: { message: 'model, input and voice are required', type: 'invalid_request_error' } });
    speeches.push({ model, input, voice, responseFormat, ...(request.headers.authorization !== undefined && { authorization: request.headers.authorization }) });
    await delay();
    const seconds = options.speechSeconds ?? 0.5;
    const bytes = responseFormat === 'wav' ? toneWav(seconds, 24_000) : responseFormat === 'mp3' || responseFormat === 'opus' ? encodedTone(responseFormat, seconds) : undefined;
    if (!bytes) return reply.code(400).send({ error: { message: `unsupported response_format ${responseFormat}`, type: 'invalid_request_error' } });
    return reply.type(mimeTypes[responseFormat] ?? 'application/octet-stream').send(bytes);
  });
  const address = await app.listen({ port: 0, host: '127.0.0.1' });
  return {
    url: `${address}/v1`,
    transcriptions,
    speeches,
    setTranscript: (text) => {
      transcript = text;
    },
    close: () => app.close(),
  };
}
