import fastifyMultipart from '@fastify/multipart';
import { Type, type Static } from '@sinclair/typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Config } from '../config.ts';
import { ApiError } from '../errors.ts';
import type { Logger } from '../logger.ts';
import type { Sessions } from '../sessions/sessions.ts';
import { SpeechService } from '../speech/speech-service.ts';
import type { AudioClip, SpeechFailure } from '../speech/speech-types.ts';
import { ownSession } from './own-session.ts';
import { rawBodyParser } from './raw-body.ts';
import { SpeechRate, type SpeechRateSettings } from './speech-rate.ts';

const SessionParams = Type.Object({ id: Type.String() });
const AudioQuery = Type.Object({ send: Type.Optional(Type.Union([Type.Literal('true'), Type.Literal('false')])) }, { additionalProperties: false });
/** The longest text spoken in one request: a few paragraphs; the page asks sentence by sentence. */
export const maxSpokenCharacters = 4_000;
const SpeechBody = Type.Object(
  {
    text: Type.String({ minLength: 1, maxLength: maxSpokenCharacters }),
    voice: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
    format: Type.Optional(Type.Union([Type.Literal('mp3'), Type.Literal('ogg_opus'), Type.Literal('wav')])),
  },
  { additionalProperties: false },
);

const megabyte = 1024 * 1024;
const howToSend = 'Send the recording as the raw body with Content-Type: audio/… (e.g. audio/webm), or as the multipart field "audio".';

export interface SpeechRouteOptions {
  sessions: Sessions;
  speech: SpeechService;
  config: Pick<Config, 'SESSION_FILES_MAX_SIZE_MB'>;
  logger: Logger;
  /** Per person: recordings transcribed, and texts spoken (the page asks one per sentence). */
  rates?: { audio?: SpeechRateSettings; speech?: SpeechRateSettings };
}

const defaultAudioRate: SpeechRateSettings = { burst: 10, perMinute: 20, concurrent: 2 };
const defaultSpeechRate: SpeechRateSettings = { burst: 60, perMinute: 120, concurrent: 3 };

/**
 * Voice (docs/protocol.md, "Voice"): `POST /sessions/:id/audio`, a recording transcribed and sent
 * as the person's message (or only transcribed with `?send=false`), and `POST /speech`, a text
 * spoken. Under the same auth, own-session check and size limit as uploads, and a rate per person.
 */
export async function speechRoutes(app: FastifyInstance, options: SpeechRouteOptions) {
  const { sessions, speech, logger } = options;
  const maxBytes = options.config.SESSION_FILES_MAX_SIZE_MB * megabyte;
  const audioRate = new SpeechRate(options.rates?.audio ?? defaultAudioRate);
  const speechRate = new SpeechRate(options.rates?.speech ?? defaultSpeechRate);
  const releases = new WeakMap<FastifyRequest, () => void>();
  const tooLarge = () => new ApiError('audio_too_large', `The recording is larger than the upload limit of ${options.config.SESSION_FILES_MAX_SIZE_MB} MB (SESSION_FILES_MAX_SIZE_MB).`);

  app.addContentTypeParser(/^audio\//i, { bodyLimit: maxBytes }, rawBodyParser(maxBytes, tooLarge));
  await app.register(fastifyMultipart, { limits: { fileSize: maxBytes, files: 1 } });
  app.addHook('onResponse', async (request) => releases.get(request)?.());

  /** A token of the person's rate, released when the response ends; 429 with Retry-After when there is none. */
  const limit = (rate: SpeechRate, request: FastifyRequest, reply: FastifyReply) => {
    const taken = rate.take(request.caller.person.id);
    if ('retryAfterSeconds' in taken) {
      reply.header('retry-after', String(taken.retryAfterSeconds));
      throw new ApiError('rate_limited', `Too many voice requests for now; try again in ${taken.retryAfterSeconds} s.`);
    }
    releases.set(request, taken.release);
  };

  app.post<{ Params: Static<typeof SessionParams>; Querystring: Static<typeof AudioQuery> }>(
    '/sessions/:id/audio',
    {
      schema: { params: SessionParams, querystring: AudioQuery },
      bodyLimit: maxBytes,
      // Before the body is read: another's session, a missing STT, a body too large or a person over the rate is refused, not received.
      onRequest: async (request, reply) => {
        await ownSession(sessions, request, request.params.id);
        if (!speech.canTranscribe) throw failureError(SpeechService.sttNotConfigured);
        if (Number(request.headers['content-length'] ?? 0) > maxBytes + megabyte) throw tooLarge();
        limit(audioRate, request, reply);
      },
    },
    async (request, reply) => {
      const session = await ownSession(sessions, request, request.params.id);
      const send = request.query.send !== 'false';
      if (send && sessions.isRunning(session.id)) throw new ApiError('session_busy', 'This session is already answering a message; stop it or wait.');
      const clip = request.isMultipart() ? await audioPart(request, tooLarge) : rawClip(request);
      const transcription = await speech.transcribe(clip, { signal: untilClientLeaves(reply) });
      if (!transcription.success) throw failureError(transcription);
      const heard = { transcript: transcription.text, ...(transcription.language && { language: transcription.language }), seconds: round(transcription.seconds) };
      if (!send) return { ...heard, sent: false };
      const sent = sessions.send(session.id, { content: transcription.text }, request.caller.person.id);
      if (!sent.ok) throw new ApiError('session_busy', 'This session is already answering a message; stop it or wait.');
      sent.outcome.catch((error: unknown) => logger.error({ err: error, session: session.id }, 'a spoken message\'s turn failed'));
      return { ...heard, sent: true };
    },
  );

  app.post<{ Body: Static<typeof SpeechBody> }>(
    '/speech',
    {
      schema: { body: SpeechBody },
      onRequest: async (request, reply) => {
        if (!speech.canSynthesize) throw failureError(SpeechService.ttsNotConfigured);
        limit(speechRate, request, reply);
      },
    },
    async (request, reply) => {
      const { text, voice, format = 'mp3' } = request.body;
      if (text.trim() === '') throw new ApiError('invalid_request', 'Invalid body: "text" has nothing to say.');
      const spoken = await speech.synthesize(text, { format, ...(voice && { voice }), signal: untilClientLeaves(reply) });
      if (!spoken.success) throw failureError(spoken);
      return reply.type(spoken.audio.mimeType).header('cache-control', 'private, no-store').send(spoken.audio.bytes);
    },
  );

  function rawClip(request: FastifyRequest): AudioClip {
    const bytes = request.body;
    if (!Buffer.isBuffer(bytes) || bytes.length === 0) throw new ApiError('audio_unreadable', `The request holds no audio. ${howToSend}`);
    return { bytes, mimeType: String(request.headers['content-type']) };
  }
}

/** The multipart field `audio`, whole; other parts are skipped. */
async function audioPart(request: FastifyRequest, tooLarge: () => ApiError): Promise<AudioClip> {
  let clip: AudioClip | undefined;
  try {
    for await (const part of request.parts()) {
      if (part.type !== 'file') continue;
      if (part.fieldname !== 'audio' || clip) {
        part.file.resume();
        continue;
      }
      clip = { bytes: await part.toBuffer(), mimeType: part.mimetype };
    }
  } catch (error) {
    if ((error as { code?: unknown }).code === 'FST_REQ_FILE_TOO_LARGE') throw tooLarge();
    if (error instanceof ApiError) throw error;
    throw new ApiError('invalid_request', `Malformed multipart body: ${(error as Error).message}.`);
  }
  if (!clip || clip.bytes.length === 0) throw new ApiError('audio_unreadable', `The form has no "audio" file. ${howToSend}`);
  return clip;
}


/** Aborted when the client goes away before the answer is sent: its conversion stops. */
function untilClientLeaves(reply: FastifyReply): AbortSignal {
  const controller = new AbortController();
  reply.raw.once('close', () => {
    if (!reply.raw.writableFinished) controller.abort();
  });
  return controller.signal;
}

function failureError(failure: SpeechFailure): ApiError {
  return new ApiError(failure.code, failure.message);
}

function round(seconds: number): number {
  return Math.round(seconds * 100) / 100;
}
