import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import Fastify from 'fastify';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { pageBundle, type PageBundle } from '../../src/server/page-bundle.ts';
import { pageBundleRoutes } from '../../src/server/page-bundle-routes.ts';

// The page's bundle built from a folder of modules written here (the whole server's, public/app,
// is checked in test/page-bundle.test.ts).

let folder: string;
beforeEach(async () => {
  folder = await mkdtemp(path.join(tmpdir(), 'hearth-page-bundle-'));
  await writeFile(path.join(folder, 'main.js'), "import { greeting } from './greeting.js';\ndocument.title = greeting('main');\n");
  await writeFile(
    path.join(folder, 'greeting.js'),
    "import { marked } from '/vendor/marked.js';\nexport function greeting(name) {\n  return marked.parseInline(`hello ${name}`);\n}\n",
  );
});
afterEach(() => rm(folder, { recursive: true, force: true }));

function built(bundle: PageBundle): Extract<PageBundle, { ok: true }> {
  if (!bundle.ok) throw new Error(`expected a bundle, got: ${bundle.message}`);
  return bundle;
}

describe('pageBundle', () => {
  it('puts the modules into one file, keeping the imports of /vendor/, with a linked source map of the files', async () => {
    const bundle = built(await pageBundle(folder, 'main.js'));
    const code = bundle.code.toString();
    expect(code).toContain('hello ${name}');
    expect(code).toContain('document.title=greeting("main")');
    expect(code).not.toMatch(/greeting\.js['"]/);
    expect(code).toContain('import{marked}from"/vendor/marked.js";');
    expect(code.trimEnd().endsWith('//# sourceMappingURL=main.js.map')).toBe(true);
    const map = JSON.parse(bundle.map.toString());
    expect(map.version).toBe(3);
    // Relative to the bundle's own URL (/app/main.js), so each source is the module's own URL.
    expect([...map.sources].sort()).toEqual(['greeting.js', 'main.js']);
    expect(map.sourcesContent[map.sources.indexOf('greeting.js')]).toContain('return marked.parseInline(`hello ${name}`);');
    expect(bundle.etag).toMatch(/^"[\w-]+"$/);
  });

  it('is built once while the files stay as they are, and again when one changes', async () => {
    const [first, second] = await Promise.all([pageBundle(folder, 'main.js'), pageBundle(folder, 'main.js')]);
    expect(second).toBe(first);
    expect(await pageBundle(folder, 'main.js')).toBe(first);

    await writeFile(path.join(folder, 'greeting.js'), 'export function greeting(name) {\n  return `good evening ${name}`;\n}\n');
    const edited = built(await pageBundle(folder, 'main.js'));
    expect(edited.code.toString()).toContain('good evening ${name}');
    expect(edited.code.toString()).not.toContain('/vendor/marked.js');
    expect(edited.etag).not.toBe(built(first).etag);

    // A new module imported by an edited one joins the bundle.
    await writeFile(path.join(folder, 'farewell.js'), "export const farewell = 'see you';\n");
    await writeFile(path.join(folder, 'main.js'), "import { farewell } from './farewell.js';\ndocument.title = farewell;\n");
    expect(built(await pageBundle(folder, 'main.js')).code.toString()).toContain('var farewell="see you";document.title=farewell;');
  });

  it("answers a module's syntax error as esbuild's message naming the file and line, and builds again once it is fixed", async () => {
    await writeFile(path.join(folder, 'greeting.js'), 'export function greeting(name) {\n  return (name;\n}\n');
    const broken = await pageBundle(folder, 'main.js');
    expect(broken).toEqual({ ok: false, message: 'greeting.js:2:14: ERROR: Expected ")" but found ";"', details: expect.stringContaining('return (name;') });

    await writeFile(path.join(folder, 'greeting.js'), 'export function greeting(name) {\n  return name.trim();\n}\n');
    expect(built(await pageBundle(folder, 'main.js')).code.toString()).toContain('return name.trim()');
  });

  it('says which import it cannot find', async () => {
    await writeFile(path.join(folder, 'main.js'), "import { missing } from './missing.js';\nmissing();\n");
    expect(await pageBundle(folder, 'main.js')).toMatchObject({ ok: false, message: 'main.js:1:24: ERROR: Could not resolve "./missing.js"' });
  });
});

describe('GET /app/main.js over a folder of modules', () => {
  async function appOver(appFolder: string) {
    const logged: string[] = [];
    const log = new Writable({
      write(chunk, _encoding, done) {
        logged.push(String(chunk));
        done();
      },
    });
    const app = Fastify({ logger: { level: 'error', stream: log } });
    await app.register(pageBundleRoutes, { appFolder });
    app.get('/health', async () => ({ ok: true }));
    return { app, logged };
  }

  it('answers the bundle and its map, 304 to a request that has this version', async () => {
    const { app } = await appOver(folder);
    const response = await app.inject({ method: 'GET', url: '/app/main.js' });
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toBe('application/javascript; charset=utf-8');
    expect(response.headers['cache-control']).toBe('public, max-age=0');
    expect(response.body).toContain('hello ${name}');
    const etag = String(response.headers.etag);
    expect(new Date(String(response.headers['last-modified'])).getTime()).toBeGreaterThan(0);

    expect((await app.inject({ method: 'GET', url: '/app/main.js', headers: { 'if-none-match': etag } })).statusCode).toBe(304);
    expect((await app.inject({ method: 'GET', url: '/app/main.js', headers: { 'if-none-match': `"other", W/${etag}` } })).statusCode).toBe(304);
    expect((await app.inject({ method: 'GET', url: '/app/main.js', headers: { 'if-none-match': '"other"' } })).statusCode).toBe(200);

    const map = await app.inject({ method: 'GET', url: '/app/main.js.map' });
    expect(map.statusCode).toBe(200);
    expect(map.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(map.headers.etag).not.toBe(etag);
    expect(map.json().sources).toContain('greeting.js');
    expect((await app.inject({ method: 'GET', url: '/app/main.js.map', headers: { 'if-none-match': String(map.headers.etag) } })).statusCode).toBe(304);
    await app.close();
  });

  it('answers a broken module with a 500 that says why, logs it, and keeps serving', async () => {
    const { app, logged } = await appOver(folder);
    await writeFile(path.join(folder, 'greeting.js'), 'export function greeting(name) {\n  return (name;\n}\n');
    const response = await app.inject({ method: 'GET', url: '/app/main.js' });
    expect(response.statusCode).toBe(500);
    expect(response.json()).toEqual({
      error: { code: 'internal_error', message: expect.stringMatching(/^The page's modules could not be bundled: greeting\.js:2:14: ERROR: Expected "\)"/) },
    });
    expect(logged.map((line) => JSON.parse(line).msg)).toEqual([expect.stringMatching(/could not be bundled:\n.*Expected "\)" but found ";"\n\n\s*greeting\.js:2:14:\n\s*2 │   return \(name;/)]);

    expect((await app.inject({ method: 'GET', url: '/health' })).statusCode).toBe(200);
    await writeFile(path.join(folder, 'greeting.js'), 'export function greeting(name) {\n  return name.trim();\n}\n');
    const fixed = await app.inject({ method: 'GET', url: '/app/main.js' });
    expect(fixed.statusCode).toBe(200);
    expect(fixed.body).toContain('return name.trim()');
    await app.close();
  });
});
