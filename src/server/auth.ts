import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { ErrorBody } from '../errors.ts';

/** An onRequest hook that requires AUTH_TOKEN as a Bearer header, a `token` cookie, or `?token=` on a WebSocket URL. */
export function requireToken(token: string) {
  const expected = digest(token);
  return async (request: FastifyRequest, reply: FastifyReply) => {
    const presented = presentedToken(request);
    if (presented !== undefined && timingSafeEqual(digest(presented), expected)) return;
    const body: ErrorBody = {
      error: {
        code: 'unauthorized',
        message: 'This Hearth server needs its AUTH_TOKEN: send "Authorization: Bearer <token>", a "token" cookie, or ?token= on the WebSocket URL.',
      },
    };
    return reply.code(401).send(body);
  };
}

function presentedToken(request: FastifyRequest): string | undefined {
  const header = request.headers.authorization;
  if (header?.startsWith('Bearer ')) return header.slice('Bearer '.length).trim();
  const cookie = readCookie(request.headers.cookie, 'token');
  if (cookie !== undefined) return cookie;
  if (request.headers.upgrade?.toLowerCase() === 'websocket') {
    const query = request.query as Record<string, unknown> | undefined;
    if (typeof query?.token === 'string') return query.token;
  }
  return undefined;
}

function readCookie(header: string | undefined, name: string): string | undefined {
  for (const part of header?.split(';') ?? []) {
    const separator = part.indexOf('=');
    if (separator > 0 && part.slice(0, separator).trim() === name) {
      try {
        return decodeURIComponent(part.slice(separator + 1).trim());
      } catch {
        return undefined;
      }
    }
  }
  return undefined;
}

function digest(value: string): Buffer {
  return createHash('sha256').update(value).digest();
}
