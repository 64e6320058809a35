import type { FastifyRequest } from 'fastify';
import type { Readable } from 'node:stream';
import { ApiError } from '../errors.ts';

type ParserDone = (error: Error | null, body?: Buffer) => void;

/**
 * A content-type parser that takes a raw upload (a document, a recording) whole into a Buffer, or
 * answers `tooLarge()` once it passes `maxBytes`.
 */
export function rawBodyParser(maxBytes: number, tooLarge: () => ApiError): (request: FastifyRequest, payload: Readable, done: ParserDone) => void {
  return (_request, payload, done) => {
    readLimited(payload, maxBytes).then(
      (bytes) => (bytes ? done(null, bytes) : done(tooLarge())),
      (error: Error) => done(new ApiError('invalid_request', `The body could not be read: ${error.message}.`)),
    );
  };
}

/** The whole body, or undefined once it passes `limit`. */
async function readLimited(stream: Readable, limit: number): Promise<Buffer | undefined> {
  const chunks: Buffer[] = [];
  let total = 0;
  for await (const chunk of stream) {
    total += (chunk as Buffer).length;
    if (total > limit) {
      // The rest is read and dropped, so the 413 still reaches the client.
      stream.resume();
      return undefined;
    }
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}
