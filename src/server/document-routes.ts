import { createReadStream } from 'node:fs';
import fastifyMultipart from '@fastify/multipart';
import { Type, type Static } from '@sinclair/typebox';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Config } from '../config.ts';
import type { AddDocumentResult, DocumentLibrary, DocumentSummary, LibraryName } from '../documents/document-types.ts';
import { ApiError } from '../errors.ts';
import { rawBodyParser } from './raw-body.ts';

const megabyte = 1024 * 1024;
const howToSend =
  'Send one file as multipart/form-data (field "file", and "library": mine or household), e.g. curl -F file=@manual.pdf -F library=mine http://HOST:PORT/documents; ' +
  'or the file as the raw body with ?name=<file name>&library=mine.';

const Library = Type.Union([Type.Literal('mine'), Type.Literal('household')]);
const DocumentParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 100 }) });
type DocumentParams = Static<typeof DocumentParams>;
const AddQuery = Type.Object(
  { name: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })), library: Type.Optional(Library) },
  { additionalProperties: false },
);
const PassagesQuery = Type.Object(
  { from: Type.Optional(Type.String({ pattern: '^[0-9]{1,7}$' })), count: Type.Optional(Type.String({ pattern: '^[0-9]{1,3}$' })) },
  { additionalProperties: false },
);
const SearchQuery = Type.Object(
  { q: Type.String({ minLength: 1, maxLength: 1000 }), limit: Type.Optional(Type.String({ pattern: '^[0-9]{1,2}$' })) },
  { additionalProperties: false },
);

export interface DocumentRouteOptions {
  documents: DocumentLibrary;
  config: Pick<Config, 'SESSION_FILES_MAX_SIZE_MB'>;
}

/**
 * The libraries of documents (docs/protocol.md, "Documents"): add one (multipart or the raw body), list, read one's
 * summary and passages, download the original, delete, search. Another person's private document is a missing one.
 */
export async function documentRoutes(app: FastifyInstance, options: DocumentRouteOptions) {
  const { documents } = options;
  const limitMegabytes = options.config.SESSION_FILES_MAX_SIZE_MB;
  const maxBytes = limitMegabytes * megabyte;
  const tooLarge = () => new ApiError('file_too_large', `The file is larger than the upload limit of ${limitMegabytes} MB (SESSION_FILES_MAX_SIZE_MB).`);

  // A raw body of any type is the document itself; multipart is read by the plugin below.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { bodyLimit: maxBytes }, rawBodyParser(maxBytes, tooLarge));
  await app.register(fastifyMultipart, { limits: { fileSize: maxBytes } });

  const visible = (request: FastifyRequest, id: string): DocumentSummary => {
    const document = documents.get(request.caller, id);
    if (!document) throw new ApiError('document_not_found', `There is no document ${id}.`);
    return document;
  };

  app.post<{ Querystring: Static<typeof AddQuery> }>(
    '/documents',
    {
      schema: { querystring: AddQuery },
      bodyLimit: maxBytes,
      // Before the body is read: a guest has no library, and a body announced too large is not received.
      onRequest: async (request) => {
        if (request.caller.person.role === 'guest') throw new ApiError('forbidden', 'Guests have no library.');
        if (Number(request.headers['content-length'] ?? 0) > maxBytes + megabyte) throw tooLarge();
      },
    },
    async (request, reply) => {
      const upload = request.isMultipart() ? await multipartUpload(request, tooLarge) : rawUpload(request);
      const added = await documents.add({
        caller: request.caller,
        library: upload.library ?? 'mine',
        name: upload.name,
        ...(upload.mediaType && { mediaType: upload.mediaType }),
        content: upload.content,
        source: 'rest',
      });
      if (!added.ok) throw refusalError(added, limitMegabytes);
      return reply.code(201).send(added.document);
    },
  );

  app.get('/documents', async (request) => ({ documents: documents.list(request.caller) }));

  app.get<{ Querystring: Static<typeof SearchQuery> }>('/documents/search', { schema: { querystring: SearchQuery } }, async (request) => {
    const query = request.query.q.trim();
    if (query === '') throw new ApiError('invalid_request', 'Invalid querystring: "q" has no words to search for.');
    const limit = request.query.limit === undefined ? undefined : Number(request.query.limit);
    if (limit !== undefined && (limit < 1 || limit > 50)) throw new ApiError('invalid_request', 'Invalid querystring: "limit" is from 1 to 50.');
    return { results: await documents.search(request.caller, query, { ...(limit !== undefined && { limit }) }) };
  });

  app.get<{ Params: DocumentParams }>('/documents/:id', { schema: { params: DocumentParams } }, async (request) => visible(request, request.params.id));

  app.get<{ Params: DocumentParams; Querystring: Static<typeof PassagesQuery> }>(
    '/documents/:id/passages',
    { schema: { params: DocumentParams, querystring: PassagesQuery } },
    async (request) => {
      const { from, count } = request.query;
      const range = { ...(from !== undefined && { from: Number(from) }), ...(count !== undefined && { count: Math.min(Number(count), 100) }) };
      const passages = await documents.passages(request.caller, request.params.id, range);
      if (!passages) throw new ApiError('document_not_found', `There is no document ${request.params.id}.`);
      return { passages };
    },
  );

  app.get<{ Params: DocumentParams }>('/documents/:id/file', { schema: { params: DocumentParams } }, async (request, reply) => {
    const original = documents.original(request.caller, request.params.id);
    if (!original) throw new ApiError('document_not_found', `There is no document ${request.params.id}.`);
    // Always a download, never shown by the page's origin: a document is untrusted (an HTML file may hold script).
    return reply
      .type('application/octet-stream')
      .header('content-disposition', `attachment; filename*=UTF-8''${encodeURIComponent(original.name)}`)
      .header('x-content-type-options', 'nosniff')
      .header('cache-control', 'private, no-store')
      .send(createReadStream(original.path));
  });

  app.delete<{ Params: DocumentParams }>('/documents/:id', { schema: { params: DocumentParams } }, async (request, reply) => {
    const document = visible(request, request.params.id);
    if (!documents.mayDelete(request.caller, document.id)) {
      throw new ApiError('forbidden', document.library === 'household' ? 'Only the owner or whoever added it may delete a household document.' : 'You may not delete this document.');
    }
    // Gone meanwhile (deleted by another request): a missing one, as any other.
    if (!(await documents.delete(request.caller, document.id))) throw new ApiError('document_not_found', `There is no document ${document.id}.`);
    return reply.code(204).send();
  });
}

interface Upload {
  name: string;
  library: LibraryName | undefined;
  mediaType: string | undefined;
  content: Buffer;
}

function rawUpload(request: FastifyRequest<{ Querystring: Static<typeof AddQuery> }>): Upload {
  const content = request.body;
  const { name, library } = request.query;
  if (!Buffer.isBuffer(content) || content.length === 0) throw new ApiError('no_file', `The request holds no file. ${howToSend}`);
  if (name === undefined) throw new ApiError('invalid_request', `A raw body needs its file name as ?name=. ${howToSend}`);
  return { name, library, mediaType: declaredType(request.headers['content-type']), content };
}

/** The form's one `file` part and its `library` field (before or after the file); the query's `library` when the form has none. */
async function multipartUpload(request: FastifyRequest<{ Querystring: Static<typeof AddQuery> }>, tooLarge: () => ApiError): Promise<Upload> {
  let library: string | undefined = request.query.library;
  const files: { name: string; mediaType: string; content: Buffer }[] = [];
  try {
    for await (const part of request.parts()) {
      if (part.type === 'field') {
        if (part.fieldname === 'library') library = String(part.value);
        continue;
      }
      if (part.fieldname !== 'file' || files.length > 0) {
        files.push({ name: part.filename, mediaType: part.mimetype, content: Buffer.alloc(0) });
        part.file.resume();
        continue;
      }
      files.push({ name: part.filename, mediaType: part.mimetype, content: await part.toBuffer() });
    }
  } catch (error) {
    if ((error as { code?: unknown }).code === 'FST_REQ_FILE_TOO_LARGE') throw tooLarge();
    if (error instanceof ApiError) throw error;
    throw new ApiError('invalid_request', `Malformed multipart body: ${(error as Error).message}.`);
  }
  if (files.length > 1) throw new ApiError('one_file_per_request', `Send one file per request; this one had ${files.length}. None was added.`);
  const [file] = files;
  if (!file || file.content.length === 0) throw new ApiError('no_file', `The form has no "file" with content. ${howToSend}`);
  if (library !== undefined && library !== 'mine' && library !== 'household') throw new ApiError('invalid_request', `"library" is mine or household, not ${JSON.stringify(library)}.`);
  const name = file.name.trim();
  if (name === '') throw new ApiError('invalid_request', `The file part has no file name. ${howToSend}`);
  return { name, library, mediaType: declaredType(file.mediaType), content: file.content };
}

/** What the client said the file is, when it said anything more telling than "some bytes" (the library detects it anyway). */
function declaredType(header: string | undefined): string | undefined {
  const type = header?.split(';', 1)[0]!.trim().toLowerCase();
  return type === undefined || type === '' || type === 'application/octet-stream' ? undefined : type;
}

function refusalError(refused: Extract<AddDocumentResult, { ok: false }>, limitMegabytes: number): ApiError {
  switch (refused.code) {
    case 'too_large':
      return new ApiError('file_too_large', refused.message || `The file is larger than the upload limit of ${limitMegabytes} MB.`);
    case 'unsupported_type':
      return new ApiError('unsupported_type', refused.message);
    case 'forbidden':
      return new ApiError('forbidden', refused.message);
    case 'invalid_request':
      return new ApiError('invalid_request', refused.message);
  }
}

