import { randomBytes } from 'node:crypto';

/** Strings at least this long (images) are kept out of `JSON.stringify` and streamed. */
const deferredMinimumLength = 64 * 1024;
/** How much of a deferred string goes into one body chunk. */
const sliceLength = 256 * 1024;
/** A deferred string is sent raw between the quotes, so it may hold only characters JSON needs no escape for. */
const rawSafe = /^[A-Za-z0-9+/=:;,._-]*$/;

/**
 * Keeps a request's large strings (base64 images, data URLs) out of the client library's
 * `JSON.stringify`: `hold()` puts a marker in their place, and `fetch()` sends the body
 * as a stream that writes each held string in slices where its marker stands. Serialising
 * and encoding a 10 MB image in one piece blocks the event loop for 100 ms or more; in
 * slices, the socket's pace spreads the work and other sessions keep being served.
 */
export class DeferredStrings {
  private readonly held: string[] = [];
  private readonly marker = `hearth-deferred-${randomBytes(8).toString('hex')}-`;

  /** What to put in the request object instead of `value`: a marker, or `value` itself when it is short. */
  hold(value: string): string {
    if (value.length < deferredMinimumLength) return value;
    this.held.push(value);
    return `${this.marker}${this.held.length - 1}`;
  }

  get holding(): boolean {
    return this.held.length > 0;
  }

  /** `baseFetch` with a string body whose markers are replaced, as a stream, by the held strings. */
  fetch(baseFetch: typeof fetch): typeof fetch {
    return (input, init) => {
      if (!this.holding || typeof init?.body !== 'string') return baseFetch(input, init);
      const pieces = this.pieces(init.body);
      const headers = new Headers(init.headers);
      headers.set('content-length', String(pieces.reduce((total, piece) => total + byteLength(piece), 0)));
      return baseFetch(input, { ...init, headers, body: streamOf(pieces), duplex: 'half' } as RequestInit);
    };
  }

  /** The serialised body cut at the markers: text to encode as it is, or a held string. */
  private pieces(body: string): Piece[] {
    const pieces: Piece[] = [];
    const markers = new RegExp(`${this.marker}(\\d+)`, 'g');
    let start = 0;
    for (const match of body.matchAll(markers)) {
      const value = this.held[Number(match[1])];
      if (value === undefined) continue;
      pieces.push({ text: body.slice(start, match.index) }, { held: value });
      start = match.index + match[0].length;
    }
    pieces.push({ text: body.slice(start) });
    return pieces;
  }
}

/** A held string that is not base64 or a data URL; the request is not sent. */
export class UnsafeDeferredStringError extends Error {
  constructor() {
    super('An image in the conversation is not valid base64, so the request was not sent.');
  }
}

/** The unsafe-string failure somewhere in a client library's chain of causes, if it is one. */
export function unsafeDeferredString(error: unknown): UnsafeDeferredStringError | undefined {
  for (let current = error, depth = 0; current instanceof Error && depth < 6; current = current.cause, depth++) {
    if (current instanceof UnsafeDeferredStringError) return current;
  }
  return undefined;
}

type Piece = { text: string } | { held: string };

function byteLength(piece: Piece): number {
  return 'text' in piece ? Buffer.byteLength(piece.text) : piece.held.length;
}

function streamOf(pieces: readonly Piece[]): ReadableStream<Uint8Array> {
  let index = 0;
  let offset = 0;
  return new ReadableStream<Uint8Array>({
    pull(controller) {
      const piece = pieces[index];
      if (!piece) return controller.close();
      if ('text' in piece) {
        index++;
        return controller.enqueue(Buffer.from(piece.text));
      }
      const slice = piece.held.slice(offset, offset + sliceLength);
      // A held string comes from base64 the server encoded itself; anything else would break the JSON around it.
      if (!rawSafe.test(slice)) return controller.error(new UnsafeDeferredStringError());
      controller.enqueue(Buffer.from(slice, 'latin1'));
      offset += sliceLength;
      if (offset >= piece.held.length) {
        index++;
        offset = 0;
      }
    },
  });
}
