import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { useHearth } from './support/hearth-server.ts';

const start = useHearth();
const appFolder = path.resolve('public/app');

/** The relative imports of the page's modules, followed from main.js: the files its bundle must hold. */
async function modulesReachedFromMain(): Promise<string[]> {
  const reached = new Set<string>();
  const visit = async (name: string): Promise<void> => {
    if (reached.has(name)) return;
    reached.add(name);
    const text = await readFile(path.join(appFolder, name), 'utf8');
    for (const [, imported] of text.matchAll(/(?:from|import)\s*['"]\.\/([\w./-]+)['"]/g)) await visit(path.posix.normalize(imported!));
  };
  await visit('main.js');
  return [...reached].sort();
}

describe('GET /app/main.js', () => {
  it("serves the page's modules as one bundle, with the page's security headers and a source map of the files", async () => {
    const hearth = await start({ env: { AUTH_TOKEN: 'secret' } });
    const response = await fetch(`${hearth.baseUrl}/app/main.js`);
    // Public like the page that loads it, before anyone signs in.
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/javascript; charset=utf-8');
    expect(response.headers.get('content-security-policy')).toContain("script-src 'self'");
    expect(response.headers.get('x-content-type-options')).toBe('nosniff');
    const code = await response.text();
    // No module is left to fetch but the libraries, which keep their own URLs.
    expect(code).not.toMatch(/(?:from|import)\s*['"]\.\.?\//);
    expect(code).toMatch(/from\s*"\/vendor\/marked\.js"/);
    expect(code).toMatch(/from\s*"\/vendor\/dompurify\.js"/);
    expect(code).toMatch(/from\s*"\/vendor\/highlight\.js"/);
    expect(code.trimEnd().endsWith('//# sourceMappingURL=main.js.map')).toBe(true);

    const map = await fetch(`${hearth.baseUrl}/app/main.js.map`);
    expect(map.status).toBe(200);
    const { sources, sourcesContent } = (await map.json()) as { sources: string[]; sourcesContent: string[] };
    expect([...sources].sort()).toEqual(await modulesReachedFromMain());
    for (const name of ['main.js', 'api.js', 'transcript.js']) {
      expect(sourcesContent[sources.indexOf(name)], name).toBe(await readFile(path.join(appFolder, name), 'utf8'));
    }

    // Answered again only when it changed.
    const etag = response.headers.get('etag')!;
    expect(etag).toMatch(/^"[\w-]+"$/);
    expect((await fetch(`${hearth.baseUrl}/app/main.js`, { headers: { 'if-none-match': etag } })).status).toBe(304);
    expect((await fetch(`${hearth.baseUrl}/app/main.js`)).headers.get('etag')).toBe(etag);
  });

  it("keeps serving the page's other files one by one", async () => {
    const hearth = await start();
    const response = await fetch(`${hearth.baseUrl}/app/api.js`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/javascript; charset=utf-8');
    expect(await response.text()).toBe(await readFile(path.join(appFolder, 'api.js'), 'utf8'));
  });
});
