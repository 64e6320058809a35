import type { Readable } from 'node:stream';
import { finished } from 'node:stream/promises';
import fastifyMultipart from '@fastify/multipart';
import { Type, type Static } from '@sinclair/typebox';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Config } from '../config.ts';
import { ApiError } from '../errors.ts';
import type { SavedFile, Sessions, StagedUpload } from '../sessions/sessions.ts';
import { ownSession } from './own-session.ts';

const SessionParams = Type.Object({ id: Type.String() });
type SessionParams = Static<typeof SessionParams>;
/** A file by its path inside the session's folder (`out/report.csv`). */
const FileParams = Type.Object({ id: Type.String(), '*': Type.String({ minLength: 1 }) });
type FileParams = Static<typeof FileParams>;

const megabyte = 1024 * 1024;
const howToSend = 'Send one file as multipart/form-data, e.g. curl -F file=@notes.txt http://HOST:PORT/sessions/<id>/files.';

export interface FileRouteOptions {
  sessions: Sessions;
  config: Config;
}

/**
 * A session's files (docs/protocol.md, "REST API"): `POST /sessions/:id/files`, one uploaded file per
 * request into the session's folder; the folder's files listed, downloaded and deleted (the page's Files panel).
 */
export async function fileRoutes(app: FastifyInstance, options: FileRouteOptions) {
  const { sessions, config } = options;
  const limitMegabytes = config.SESSION_FILES_MAX_SIZE_MB;
  // Any other body is left unread, and the route refuses it as not multipart whatever its type.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', (_request, _payload, done) => done(null));
  await app.register(fastifyMultipart, { limits: { fileSize: limitMegabytes * megabyte } });

  app.post<{ Params: SessionParams }>(
    '/sessions/:id/files',
    {
      schema: { params: SessionParams },
      // Before the body is read: an upload to an unknown session, or someone else's, is refused, not received.
      onRequest: async (request) => {
        await ownSession(sessions, request, request.params.id);
      },
    },
    async (request) => {
      if (!request.isMultipart()) throw new ApiError('no_file', `The body is not multipart/form-data. ${howToSend}`);
      const { id } = request.params;
      return receiveOneFile(request, (stream) => sessions.stageFile(id, stream), limitMegabytes);
    },
  );

  app.get<{ Params: SessionParams }>('/sessions/:id/files', { schema: { params: SessionParams } }, async (request) => {
    const session = await ownSession(sessions, request, request.params.id);
    const files = await sessions.files(session.id);
    return {
      files: files.map((file) => ({ name: file.name, size: file.size, modified_at: file.modifiedAt })),
      retention_hours: config.SESSION_FILES_TTL_HOURS,
      max_upload_mb: limitMegabytes,
    };
  });

  app.get<{ Params: FileParams }>('/sessions/:id/files/*', { schema: { params: FileParams } }, async (request, reply) => {
    const session = await ownSession(sessions, request, request.params.id);
    const name = request.params['*'];
    const opened = await sessions.openFile(session.id, name);
    if (!opened) throw new ApiError('file_not_found', `Session ${session.id} has no file ${name}.`);
    // Always a download, never shown by the page's origin: a tool may have written HTML.
    return reply
      .type('application/octet-stream')
      .header('content-length', opened.size)
      .header('content-disposition', `attachment; filename*=UTF-8''${encodeURIComponent(name.split('/').at(-1)!)}`)
      .header('cache-control', 'private, no-store')
      .send(opened.handle.createReadStream());
  });

  app.delete<{ Params: FileParams }>('/sessions/:id/files/*', { schema: { params: FileParams } }, async (request, reply) => {
    const session = await ownSession(sessions, request, request.params.id);
    const name = request.params['*'];
    if (!(await sessions.deleteFile(session.id, name))) throw new ApiError('file_not_found', `Session ${session.id} has no file ${name}.`);
    return reply.code(204).send();
  });
}

/** Reads the whole body, keeps its one file part, and leaves nothing on disk when the request is refused or fails. */
async function receiveOneFile(request: FastifyRequest, stage: (stream: Readable) => Promise<StagedUpload>, limitMegabytes: number): Promise<SavedFile> {
  let staged: StagedUpload | undefined;
  let clientName = '';
  let fileParts = 0;
  let truncated = false;
  try {
    for await (const part of request.parts()) {
      if (part.type !== 'file') continue;
      fileParts += 1;
      if (fileParts > 1) {
        part.file.resume();
        await finished(part.file);
        continue;
      }
      clientName = part.filename;
      staged = await stage(part.file);
      truncated = part.file.truncated;
    }
  } catch (error) {
    await staged?.discard();
    if ((error as { code?: unknown }).code !== 'FST_REQ_FILE_TOO_LARGE') throw asClientError(error);
    truncated = true;
  }
  const refusal =
    fileParts === 0
      ? new ApiError('no_file', `The form has no file part. ${howToSend}`)
      : fileParts > 1
        ? new ApiError('one_file_per_request', `Send one file per request; this one had ${fileParts}. None was saved.`)
        : truncated
          ? new ApiError('file_too_large', `The file is larger than the upload limit of ${limitMegabytes} MB (SESSION_FILES_MAX_SIZE_MB).`)
          : undefined;
  if (refusal !== undefined || staged === undefined) {
    await staged?.discard();
    throw refusal ?? new ApiError('no_file', howToSend);
  }
  return staged.commit(clientName);
}

/** Parser failures (a missing boundary, a cut-off body) are the client's; file-system failures stay server errors. */
function asClientError(error: unknown): unknown {
  const failure = error as { statusCode?: unknown; syscall?: unknown; message?: unknown };
  if (failure.statusCode !== undefined || failure.syscall !== undefined) return error;
  return new ApiError('invalid_request', `Malformed multipart body: ${String(failure.message ?? error)}.`);
}
