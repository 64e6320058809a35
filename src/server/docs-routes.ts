import { readdirSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import type { FastifyInstance } from 'fastify';
import { packagePath } from '../package-root.ts';

/**
 * `GET /docs/<name>.md`: Hearth's own documentation as plain text, public like the page, so that
 * what the page points to (the bell's "need HTTPS") opens on the device that shows it, a phone
 * included. Only the Markdown files shipped in docs/ are routes.
 */
export async function docsRoutes(app: FastifyInstance) {
  const folder = packagePath('docs');
  let names: string[];
  try {
    names = readdirSync(folder).filter((name) => /^[a-z0-9-]+\.md$/.test(name));
  } catch {
    names = [];
  }
  for (const name of names) {
    app.get(`/docs/${name}`, async (_request, reply) =>
      reply.type('text/plain; charset=utf-8').header('cache-control', 'no-cache').send(await readFile(`${folder}/${name}`)),
    );
  }
}
