import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { isLoopback } from '../config.ts';
import type { ErrorBody } from '../errors.ts';
import type { Household } from '../household/household.ts';
import type { Caller } from '../people/person.ts';

/** Where a request's person is found from what it presents: a sign-in cookie, a personal API token. */
export interface Credentials {
  /** The person signed in with this cookie value, while the sign-in lasts. */
  signedIn(secret: string): Promise<Caller | undefined>;
  /** The person whose personal API token this is, until it is revoked. */
  apiToken(secret: string): Promise<Caller | undefined>;
}

/** The cookie a sign-in sets (HttpOnly, SameSite=Strict). */
export const signInCookie = 'hearth_session';

export interface IdentifyOptions {
  /** AUTH_TOKEN: whoever presents it acts as the owner. '' when unset. */
  authToken: string;
  household: Household;
  credentials?: Credentials;
}

/**
 * An onRequest hook that finds whose request it is and sets `request.caller`, or answers 401.
 * In order: AUTH_TOKEN (Bearer, `token` cookie, `?token=` on a WebSocket URL) is the owner; a
 * sign-in cookie or a personal API token (Bearer) is its person; and a request from this machine
 * to a Hearth without AUTH_TOKEN, while the household is one person, is that person — a
 * one-person Hearth needs no sign-in. Once a second person joins, loopback alone proves nothing:
 * a reverse proxy on this machine makes everyone look local.
 */
export function identify({ authToken, household, credentials }: IdentifyOptions) {
  const expected = authToken === '' ? undefined : digest(authToken);
  return async (request: FastifyRequest, reply: FastifyReply) => {
    const caller = await callerOf(request);
    if (caller) {
      request.caller = caller;
      return;
    }
    return reply.code(401).send(unauthorized(expected !== undefined, (await household.size()) > 1));
  };

  async function callerOf(request: FastifyRequest): Promise<Caller | undefined> {
    const bearer = bearerToken(request);
    const presented = bearer ?? readCookie(request.headers.cookie, 'token') ?? webSocketToken(request);
    if (expected !== undefined && presented !== undefined && timingSafeEqual(digest(presented), expected)) {
      return { person: await household.firstOwner(), via: 'auth_token' };
    }
    const signIn = readCookie(request.headers.cookie, signInCookie);
    if (signIn !== undefined && credentials) {
      const caller = await credentials.signedIn(signIn);
      if (caller) return caller;
    }
    if (bearer !== undefined && credentials) {
      const caller = await credentials.apiToken(bearer);
      if (caller) return caller;
    }
    if (expected === undefined && isLoopback(request.socket.remoteAddress ?? '') && (await household.size()) === 1) {
      return { person: await household.firstOwner(), via: 'loopback' };
    }
    return undefined;
  }
}

/** How one may prove who one is to this server, as the 401's `error.sign_in` lists them (docs/protocol.md). */
export type SignInWay = 'passphrase' | 'passkey' | 'api_token' | 'auth_token';

function unauthorized(hasAuthToken: boolean, household: boolean): ErrorBody & { error: { sign_in: SignInWay[] } } {
  const ways: SignInWay[] = [...(household ? (['passphrase', 'passkey'] as const) : []), 'api_token', ...(hasAuthToken ? (['auth_token'] as const) : [])];
  const told = [
    household ? 'sign in (POST /auth/sign-in, or a passkey)' : undefined,
    'send a personal API token as "Authorization: Bearer <token>"',
    hasAuthToken ? 'or the AUTH_TOKEN as a Bearer header, a "token" cookie, or ?token= on the WebSocket URL' : undefined,
  ].filter((way) => way !== undefined);
  return { error: { code: 'unauthorized', message: `This Hearth server needs to know who you are: ${told.join(', ')}.`, sign_in: ways } };
}

function bearerToken(request: FastifyRequest): string | undefined {
  const header = request.headers.authorization;
  return header?.startsWith('Bearer ') ? header.slice('Bearer '.length).trim() : undefined;
}

function webSocketToken(request: FastifyRequest): string | undefined {
  if (request.headers.upgrade?.toLowerCase() !== 'websocket') return undefined;
  const query = request.query as Record<string, unknown> | undefined;
  return typeof query?.token === 'string' ? query.token : undefined;
}

/** One cookie's value from a Cookie header; undefined when absent or not decodable. */
export function readCookie(header: string | undefined, name: string): string | undefined {
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

declare module 'fastify' {
  interface FastifyRequest {
    /** Whose request this is; set by `identify` on every route behind it. */
    caller: Caller;
  }
}
