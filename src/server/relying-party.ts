import type { FastifyRequest } from 'fastify';
import { ApiError } from '../errors.ts';
import type { RelyingParty } from '../household/passkeys.ts';
import { cameOverHttps } from './sign-in-cookie.ts';

/**
 * Where the page runs, as WebAuthn names it: the host name and the origin. Browsers offer passkeys
 * only to a secure page and never for an IP address, so it is HTTPS or a `localhost` name.
 */
export function relyingParty(request: FastifyRequest): RelyingParty {
  const host = request.headers.host ?? '';
  const name = host.replace(/:\d+$/, '').toLowerCase();
  const https = cameOverHttps(request);
  if (!https && name !== 'localhost' && !name.endsWith('.localhost')) {
    throw new ApiError('invalid_request', 'Passkeys need the page served over HTTPS, or opened as http://localhost.');
  }
  return { id: name, origin: `${https ? 'https' : 'http'}://${host}` };
}
