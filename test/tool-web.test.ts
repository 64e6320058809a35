import { afterEach, describe, expect, it } from 'vitest';
import { parseConfig } from '../src/config.ts';
import { createWebSearchTool } from '../src/tools/builtin/web-search.ts';
import { createWebViewTool } from '../src/tools/builtin/web-view.ts';
import { closeServers, serve } from './support/loopback-http.ts';
import { runTool } from './support/tool-context.ts';

afterEach(closeServers);

function servePage(contentType: string, content: string) {
  return serve((_request, response) => {
    response.setHeader('content-type', contentType);
    response.end(content);
  });
}

const articlePage = `<!doctype html>
<html><head><title>Bread at home</title><style>body { color: red }</style>
<script>window.secretTracker = "tracking-code-in-head";</script></head>
<body>
  <header><a href="/">Site logo text</a></header>
  <nav><ul><li><a href="/">Home menu entry</a></li><li><a href="/shop">Shop menu entry</a></li></ul></nav>
  <main><article>
    <h1>Bread at home</h1>
    <p>Baking bread at home needs flour, water, salt and time. The dough rests overnight.</p>
    <script>document.write("inline-script-output")</script>
    <p>Bake it   hot for
       forty minutes, then let it cool before slicing.</p>
  </article></main>
  <footer>Copyright footer text</footer>
</body></html>`;

describe('web_view', () => {
  const tool = createWebViewTool();

  it('returns the title and the article text without scripts, menus, header or footer', async () => {
    const base = await servePage('text/html; charset=utf-8', articlePage);
    const result = await runTool(tool, { url: `${base}/bread` });
    expect(result.success).toBe(true);
    expect(result.output.startsWith(`Title: Bread at home\nURL: ${base}/bread\n\n`)).toBe(true);
    expect(result.output).toContain('Baking bread at home needs flour, water, salt and time. The dough rests overnight.\n\nBake it hot for forty minutes');
    for (const unwanted of ['tracking-code', 'inline-script-output', 'color: red', 'menu entry', 'Site logo', 'Copyright footer']) {
      expect(result.output).not.toContain(unwanted);
    }
  });

  it('returns a plain text page as is', async () => {
    const base = await servePage('text/plain', 'first line\n  indented second line');
    const result = await runTool(tool, { url: `${base}/notes.txt` });
    expect(result.output).toBe(`URL: ${base}/notes.txt\n\nfirst line\n  indented second line`);
  });

  it('truncates to max_chars with a note', async () => {
    const paragraphs = Array.from({ length: 40 }, (_, index) => `<p>Paragraph ${index} tells a long story about sourdough starters and ovens.</p>`).join('');
    const base = await servePage('text/html', `<html><head><title>Long</title></head><body><article>${paragraphs}</article></body></html>`);
    const result = await runTool(tool, { url: base, max_chars: 500 });
    expect(result.output).toContain('Paragraph 0 tells');
    expect(result.output).not.toContain('Paragraph 39');
    expect(result.output).toMatch(/\[truncated: showing 500 of \d+ characters; call again with a larger max_chars/);
  });

  it('reports an error status and binary content as failures', async () => {
    const base = await serve((request, response) => {
      if (request.url === '/missing') response.writeHead(404, { 'content-type': 'text/html' }).end('<p>Gone fishing</p>');
      else response.writeHead(200, { 'content-type': 'application/pdf' }).end(Buffer.alloc(2048));
    });
    const missing = await runTool(tool, { url: `${base}/missing` });
    expect(missing).toMatchObject({ success: false, output: expect.stringContaining('answered HTTP 404 Not Found') });
    expect(missing.output).toContain('Gone fishing');
    const binary = await runTool(tool, { url: `${base}/paper.pdf` });
    expect(binary).toMatchObject({ success: false, output: expect.stringContaining('is application/pdf (2.0 KB)') });
  });

  it('gives the approval subject as GET <url>', () => {
    expect(tool.subject?.({ url: 'https://example.com/page' })).toBe('GET https://example.com/page');
  });
});

describe('web_search with SearXNG', () => {
  it('calls /search with format=json and numbers the results', async () => {
    let seen: URL | undefined;
    const base = await serve((request, response) => {
      seen = new URL(request.url ?? '', 'http://localhost');
      response.setHeader('content-type', 'application/json');
      response.end(
        JSON.stringify({
          results: [
            { title: 'Sourdough guide', url: 'https://bread.example/guide', content: 'Everything about  starters.' },
            { title: 'Oven temperatures', url: 'https://ovens.example/', content: '' },
            { title: 'Third', url: 'https://third.example/', content: 'more' },
          ],
        }),
      );
    });
    const tool = createWebSearchTool({ config: parseConfig({ WEB_SEARCH_URL: `${base}/` }) });
    const result = await runTool(tool, { query: 'sourdough starter', max_results: 2 });
    expect(seen?.pathname).toBe('/search');
    expect(seen?.searchParams.get('q')).toBe('sourdough starter');
    expect(seen?.searchParams.get('format')).toBe('json');
    expect(result.output).toBe(
      '1. Sourdough guide\n   https://bread.example/guide\n   Everything about starters.\n\n2. Oven temperatures\n   https://ovens.example/',
    );
  });

  it('explains a 403 as the JSON format being disabled', async () => {
    const base = await serve((_request, response) => response.writeHead(403).end('Forbidden'));
    const tool = createWebSearchTool({ config: parseConfig({ WEB_SEARCH_URL: base }) });
    const result = await runTool(tool, { query: 'anything' });
    expect(result.success).toBe(false);
    expect(result.output).toContain('search.formats');
  });
});

const duckDuckGoPage = `<!DOCTYPE html><html><body><div id="links" class="results">
  <div class="result results_links result--ad">
    <h2 class="result__title"><a class="result__a" href="https://duckduckgo.com/y.js?ad_domain=shop.example">Buy bread now</a></h2>
    <a class="result__snippet" href="#">An advertisement.</a>
  </div>
  <div class="result results_links results_links_deep web-result">
    <h2 class="result__title"><a rel="nofollow" class="result__a" href="//duckduckgo.com/l/?uddg=https%3A%2F%2Fbread.example%2Frecipes%3Fkind%3Drye%26page%3D2&amp;rut=abc123">Rye <b>bread</b> recipes</a></h2>
    <a class="result__snippet" href="//duckduckgo.com/l/?uddg=https%3A%2F%2Fbread.example%2Frecipes">How to bake <b>rye</b>
       bread at home.</a>
  </div>
  <div class="result results_links results_links_deep web-result">
    <h2 class="result__title"><a rel="nofollow" class="result__a" href="https://direct.example/page">Direct link</a></h2>
  </div>
</div></body></html>`;

describe('web_search with DuckDuckGo', () => {
  async function duckDuckGoTool(page: string) {
    const requests: Array<{ url: string; method?: string; body?: string }> = [];
    const base = await servePage('text/html; charset=utf-8', page);
    const loopbackFetch: typeof fetch = (input, init) => {
      requests.push({ url: String(input), method: init?.method, body: String(init?.body) });
      return fetch(base, init);
    };
    return { tool: createWebSearchTool({ config: parseConfig({}), fetch: loopbackFetch }), requests };
  }

  it('posts the query to the HTML endpoint, skips ads and unwraps uddg redirects', async () => {
    const { tool, requests } = await duckDuckGoTool(duckDuckGoPage);
    const result = await runTool(tool, { query: 'rye bread' });
    expect(requests).toEqual([{ url: 'https://html.duckduckgo.com/html/', method: 'POST', body: 'q=rye+bread' }]);
    expect(result.output).toBe(
      '1. Rye bread recipes\n   https://bread.example/recipes?kind=rye&page=2\n   How to bake rye bread at home.\n\n2. Direct link\n   https://direct.example/page',
    );
  });

  it('says so when there are no results', async () => {
    const { tool } = await duckDuckGoTool('<html><body><div class="no-results">No results.</div></body></html>');
    const result = await runTool(tool, { query: 'qwxzv nothing' });
    expect(result).toEqual({ success: true, output: 'No results for "qwxzv nothing". Try fewer or different words.' });
  });

  it('reports a bot check as a failure', async () => {
    const { tool } = await duckDuckGoTool('<html><body><div class="anomaly-modal__title">Unfortunately, bots use DuckDuckGo too.</div><form id="challenge-form"></form></body></html>');
    const result = await runTool(tool, { query: 'bread' });
    expect(result.success).toBe(false);
    expect(result.output).toContain('bot check');
  });
});
