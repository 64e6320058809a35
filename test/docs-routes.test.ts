import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { useHearth } from './support/hearth-server.ts';

const start = useHearth();

describe('GET /docs/<name>.md', () => {
  it("serves Hearth's own docs as plain text, public like the page, so the page's links open on a phone", async () => {
    const hearth = await start({ env: { AUTH_TOKEN: 'a-token' } });
    const response = await fetch(`${hearth.baseUrl}/docs/operations.md`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/plain; charset=utf-8');
    expect(response.headers.get('x-content-type-options')).toBe('nosniff');
    expect(await response.text()).toBe(readFileSync('docs/operations.md', 'utf8'));
  });

  it('has no route for anything but the Markdown files of docs/', async () => {
    const hearth = await start();
    for (const path of ['/docs/no-such-page.md', '/docs/', '/docs/..%2Fpackage.json', '/docs/../package.json', '/docs/operations.md.bak']) {
      const response = await fetch(`${hearth.baseUrl}${path}`);
      expect(response.status, path).toBe(404);
    }
  });
});
