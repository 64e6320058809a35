import type { FastifyReply, FastifyRequest } from 'fastify';
import { isLoopback } from '../config.ts';
import type { ErrorBody } from '../errors.ts';

/**
 * Refuses what a browser may be tricked into sending. A request carrying an `Origin` other than
 * the server's own (another site's script, or a cross-site WebSocket) is refused; so is, on a
 * server without AUTH_TOKEN, a `Host` that is not a loopback name, which is how DNS rebinding
 * turns a web page into a same-origin client of a loopback server.
 */
export function guardRequests({ requireLoopbackHost }: { requireLoopbackHost: boolean }) {
  return async (request: FastifyRequest, reply: FastifyReply) => {
    const host = request.headers.host ?? '';
    if (requireLoopbackHost && !isLoopback(hostName(host))) {
      return reply.code(403).send(refusal('forbidden_host', `Host "${host}" is not this server's loopback address. To reach Hearth by another name, set AUTH_TOKEN.`));
    }
    const origin = request.headers.origin;
    if (origin !== undefined && originHost(origin) !== host.toLowerCase()) {
      return reply.code(403).send(refusal('forbidden_origin', `Requests from ${origin} are refused: only Hearth's own page may call it from a browser.`));
    }
  };
}

function refusal(code: 'forbidden_host' | 'forbidden_origin', message: string): ErrorBody {
  return { error: { code, message } };
}

/** `localhost:8000` → `localhost`, `[::1]:8000` → `::1`. */
function hostName(host: string): string {
  const bracketed = /^\[([^\]]+)\]/.exec(host);
  if (bracketed) return bracketed[1]!;
  return host.replace(/:\d+$/, '').toLowerCase();
}

/** The `host[:port]` of an Origin header as it would appear in a Host header; '' when it has none ("null"). */
function originHost(origin: string): string {
  try {
    return new URL(origin).host;
  } catch {
    return '';
  }
}
