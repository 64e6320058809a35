import type { FastifyReply, FastifyRequest } from 'fastify';
import { isLoopback } from '../config.ts';
import { signInLifetimeMs } from '../household/sign-ins.ts';
import { signInCookie } from './identify.ts';

/**
 * Sets the sign-in cookie: HttpOnly (no script reads it), SameSite=Strict (no other site's page
 * sends it), Path=/, and Secure when the request came over HTTPS: Hearth's own TLS, or a reverse
 * proxy on this machine that says so in X-Forwarded-Proto.
 */
export function setSignInCookie(request: FastifyRequest, reply: FastifyReply, secret: string): void {
  reply.header('set-cookie', cookie(request, encodeURIComponent(secret), Math.floor(signInLifetimeMs / 1000)));
}

export function clearSignInCookie(request: FastifyRequest, reply: FastifyReply): void {
  reply.header('set-cookie', cookie(request, '', 0));
}

function cookie(request: FastifyRequest, value: string, maxAgeSeconds: number): string {
  const attributes = [`${signInCookie}=${value}`, 'Path=/', `Max-Age=${maxAgeSeconds}`, 'HttpOnly', 'SameSite=Strict'];
  if (cameOverHttps(request)) attributes.push('Secure');
  return attributes.join('; ');
}

export function cameOverHttps(request: FastifyRequest): boolean {
  if (request.protocol === 'https') return true;
  const forwarded = request.headers['x-forwarded-proto'];
  return isLoopback(request.socket.remoteAddress ?? '') && typeof forwarded === 'string' && forwarded.split(',')[0]!.trim().toLowerCase() === 'https';
}
