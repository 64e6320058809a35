import { isIP } from 'node:net';
import type { FastifyRequest } from 'fastify';
import { isLoopback } from '../config.ts';

/**
 * Whom a request came from, as the sign-in throttle counts and the logs name them: the socket's
 * address, or, when that is a reverse proxy on this machine, the address the proxy appended to
 * X-Forwarded-For (its last entry: earlier ones are whatever the client claimed). Without this,
 * everyone behind the proxy is one address, and one guesser slows or refuses all their sign-ins.
 */
export function clientAddress(request: FastifyRequest): string {
  const socketAddress = request.socket.remoteAddress ?? request.ip;
  const forwarded = request.headers['x-forwarded-for'];
  if (!isLoopback(socketAddress) || typeof forwarded !== 'string') return socketAddress;
  const last = forwarded.split(',').at(-1)!.trim();
  return isIP(last) === 0 ? socketAddress : last;
}
