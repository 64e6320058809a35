import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { type Hearth, useHearth } from './support/hearth-server.ts';

const start = useHearth();

const javascript = 'text/javascript; charset=utf-8';
const css = 'text/css; charset=utf-8';

async function fetchText(server: Hearth, url: string): Promise<{ status: number; type: string | null; cacheControl: string | null; text: string }> {
  const response = await fetch(server.baseUrl + url);
  return {
    status: response.status,
    type: response.headers.get('content-type'),
    cacheControl: response.headers.get('cache-control'),
    text: await response.text(),
  };
}

/** Imports an ES module given as text, the way the browser would load it. */
async function importModule(source: string): Promise<any> {
  const folder = await mkdtemp(path.join(tmpdir(), 'hearth-vendor-'));
  try {
    const file = path.join(folder, 'module.mjs');
    // The test runner would look for the source map beside the temporary copy.
    await writeFile(file, source.replace(/^\/\/# sourceMappingURL=.*$/m, ''));
    return await import(pathToFileURL(file).href);
  } finally {
    await rm(folder, { recursive: true, force: true });
  }
}

describe('GET /vendor/*', () => {
  it.each([
    ['/vendor/marked.js', javascript, 'as Marked'],
    ['/vendor/dompurify.js', javascript, 'as default'],
    ['/vendor/highlight.js', javascript, 'as default'],
    ['/vendor/highlight-light.css', css, '.hljs'],
    ['/vendor/highlight-dark.css', css, '.hljs'],
  ])('%s answers 200 as %s, cacheable', async (url, type, excerpt) => {
    const hearth = await start();
    const response = await fetchText(hearth, url);
    expect(response).toMatchObject({ status: 200, type, cacheControl: 'public, max-age=86400' });
    expect(response.text).toContain(excerpt);
  });

  it('serves marked and DOMPurify as ES modules with their exports', async () => {
    const hearth = await start();
    const marked = await importModule((await fetchText(hearth, '/vendor/marked.js')).text);
    expect(new marked.Marked().parse('**bold**')).toContain('<strong>bold</strong>');
    expect(typeof marked.marked).toBe('function');
    const dompurify = (await fetchText(hearth, '/vendor/dompurify.js')).text;
    expect(dompurify).toMatch(/export\s*\{[^}]*as default/);
  });

  it('bundles highlight.js into one ES module with the common languages, once', async () => {
    const hearth = await start();
    const [first, second] = await Promise.all([fetchText(hearth, '/vendor/highlight.js'), fetchText(hearth, '/vendor/highlight.js')]);
    expect(second.text).toBe(first.text);
    expect(first.text).not.toMatch(/\brequire\(/);
    const { default: hljs } = await importModule(first.text);
    expect(hljs.highlight('const a = 1', { language: 'javascript' }).value).toContain('hljs-keyword');
    expect(hljs.getLanguage('python')).toBeDefined();
    expect((await fetchText(hearth, '/vendor/highlight.js')).text).toBe(first.text);
  });

  it('is public when AUTH_TOKEN is set, while the API is not', async () => {
    const hearth = await start({ env: { AUTH_TOKEN: 'secret' } });
    for (const url of ['/vendor/marked.js', '/vendor/dompurify.js', '/vendor/highlight.js', '/vendor/highlight-dark.css']) {
      expect((await fetchText(hearth, url)).status).toBe(200);
    }
    expect((await fetchText(hearth, '/sessions')).status).toBe(401);
  });

  it('answers 404 not_found for an unknown vendor file', async () => {
    const hearth = await start();
    const response = await hearth.request('GET', '/vendor/nope.js');
    expect(response).toEqual({ status: 404, body: { error: { code: 'not_found', message: expect.stringContaining('/vendor/nope.js') } } });
  });
});
