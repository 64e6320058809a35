import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ErrorBody } from '../errors.ts';
import { pageBundle } from './page-bundle.ts';

export interface PageBundleRouteOptions {
  /** The page's modules (public/app); its other files stay served one by one as they are. */
  appFolder: string;
}

/**
 * `GET /app/main.js`: the page's modules as one esbuild bundle instead of 55 files fetched one
 * import level after another, which a phone on a slow link pays a round trip each for, with a
 * linked source map (`/app/main.js.map`) so the browser's developer tools show the files.
 */
export async function pageBundleRoutes(app: FastifyInstance, { appFolder }: PageBundleRouteOptions) {
  const send = async (request: FastifyRequest, reply: FastifyReply, part: 'code' | 'map') => {
    const bundle = await pageBundle(appFolder, 'main.js');
    if (!bundle.ok) {
      request.log.error(`The page's modules could not be bundled:\n${bundle.details}`);
      const body: ErrorBody = { error: { code: 'internal_error', message: `The page's modules could not be bundled: ${bundle.message}` } };
      return reply.code(500).send(body);
    }
    reply
      .header('cache-control', 'public, max-age=0')
      .header('etag', part === 'code' ? bundle.etag : mapEtag(bundle.etag))
      .header('last-modified', bundle.lastModified.toUTCString());
    if (matchesEtag(request.headers['if-none-match'], String(reply.getHeader('etag')))) return reply.code(304).send();
    return part === 'code'
      ? reply.type('application/javascript; charset=utf-8').send(bundle.code)
      : reply.type('application/json; charset=utf-8').send(bundle.map);
  };
  app.get('/app/main.js', (request, reply) => send(request, reply, 'code'));
  app.get('/app/main.js.map', (request, reply) => send(request, reply, 'map'));
}

/** The map changes exactly when its bundle does. */
function mapEtag(etag: string): string {
  return `${etag.slice(0, -1)}-map"`;
}

/** If-None-Match: `*` or a list of tags; a weak tag matches too (RFC 9110, weak comparison). */
function matchesEtag(ifNoneMatch: string | undefined, etag: string): boolean {
  if (ifNoneMatch === undefined) return false;
  return ifNoneMatch.split(',').some((tag) => {
    const trimmed = tag.trim();
    return trimmed === '*' || trimmed === etag || trimmed === `W/${etag}`;
  });
}
