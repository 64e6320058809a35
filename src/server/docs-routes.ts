import { readFile } from 'node:fs/promises';
import type { FastifyInstance } from 'fastify';
import { packagePath } from '../package-root.ts';

const docName = /^[a-z0-9-]+\.md$/;

/**
 * `GET /docs/<name>.md`: Hearth's own documentation as plain text, public like the page, so that
 * what the page points to (the bell's "need HTTPS") opens on the device that shows it, a phone
 * included. Only the Markdown files shipped in docs/ are found; any other name is a missing page.
 * One route read at request time, not one per file listed at every start (issue 38).
 */
export async function docsRoutes(app: FastifyInstance) {
  const folder = packagePath('docs');
  app.get<{ Params: { name: string } }>('/docs/:name', async (request, reply) => {
    const { name } = request.params;
    if (!docName.test(name)) return reply.callNotFound();
    let text: Buffer;
    try {
      text = await readFile(`${folder}/${name}`);
    } catch {
      return reply.callNotFound();
    }
    return reply.type('text/plain; charset=utf-8').header('cache-control', 'no-cache').send(text);
  });
}
