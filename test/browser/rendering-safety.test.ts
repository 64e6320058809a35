/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
import type { IncomingMessage } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { browserTest, screenshot, sel, sendMessage, skipBrowserTests, useBrowser, waitForApp, waitForIdle } from '../support/browser.ts';
import { closeServers, serve } from '../support/loopback-http.ts';

afterEach(closeServers);

const markdownAnswer = [
  '# Weekly report',
  '',
  '## Tasks',
  '',
  '- water the plants',
  '- back up the *server*',
  '- call **grandma**',
  '',
  '1. first step',
  '2. second step',
  '',
  '```js',
  'const answer = 42;',
  'function greet(name) {',
  '  return `hello ${name}`;',
  '}',
  '```',
  '',
  'Done with `inline code`.',
].join('\n');

describe.skipIf(skipBrowserTests)('rendering in the browser', () => {
  const browser = useBrowser();

  it('renders Markdown headings, lists and a highlighted code block with a working Copy code button', browserTest, async () => {
    const hearth = await browser.hearth();
    hearth.llm.script({ content: markdownAnswer, chunkSize: 5, delayMs: 5 });
    const sessionId = await hearth.createSession();
    const page = await browser.openPage(hearth, { hash: sessionId, permissions: ['clipboard-read', 'clipboard-write'] });
    await waitForApp(page);
    await sendMessage(page, 'Write the weekly report');
    await waitForIdle(page);

    const answer = page.locator(`${sel.assistant} .markdown`).last();
    await answer.locator('pre code.hljs').waitFor();
    expect(await answer.locator('h1').innerText()).toBe('Weekly report');
    expect(await answer.locator('h2').innerText()).toBe('Tasks');
    expect(await answer.locator('ul > li').allInnerTexts()).toEqual(['water the plants', 'back up the server', 'call grandma']);
    expect(await answer.locator('ul em').innerText()).toBe('server');
    expect(await answer.locator('ul strong').innerText()).toBe('grandma');
    expect(await answer.locator('ol > li').allInnerTexts()).toEqual(['first step', 'second step']);
    expect(await answer.locator('p code').first().innerText()).toBe('inline code');

    const code = answer.locator('pre code.hljs');
    expect(await code.count()).toBe(1);
    expect(await code.getAttribute('class')).toMatch(/\blanguage-js\b/);
    expect(await code.locator('.hljs-keyword').count()).toBeGreaterThan(0);
    expect(await code.locator('.hljs-keyword').allInnerTexts()).toEqual(expect.arrayContaining(['const', 'function', 'return']));
    expect((await code.innerText()).trim()).toBe('const answer = 42;\nfunction greet(name) {\n  return `hello ${name}`;\n}');

    const copy = page.locator(`${sel.assistant} button[aria-label="Copy code"]`);
    expect(await copy.count()).toBe(1);
    await copy.click();
    const copied = await page.evaluate(() => navigator.clipboard.readText());
    await screenshot(page, 'markdown-and-code');
    expect(copied.trim()).toBe('const answer = 42;\nfunction greet(name) {\n  return `hello ${name}`;\n}');

    // The history path renders the same way after a reload.
    await page.reload();
    await waitForApp(page);
    const reloaded = page.locator(`${sel.assistant} .markdown`).last();
    await reloaded.locator('pre code.hljs .hljs-keyword').first().waitFor();
    expect(await reloaded.locator('h1').innerText()).toBe('Weekly report');
    expect(await page.locator(`${sel.assistant} button[aria-label="Copy code"]`).count()).toBe(1);
  });

  it('keeps hostile HTML, javascript: links and remote images in answers and user messages inert', browserTest, async () => {
    const requests: string[] = [];
    const tracker = await serve((request: IncomingMessage, response) => {
      requests.push(`${request.method} ${request.url}`);
      response.writeHead(200, { 'content-type': 'image/png' });
      response.end();
    });
    const hostile = [
      'Here is a harmless sentence.',
      '',
      '<img src=x onerror="window.__pwned=1">',
      '',
      '<script>window.__pwned=2</script>',
      '',
      '[click me](javascript:window.__pwned=3)',
      '',
      `![tracking pixel](${tracker}/pixel.png)`,
      '',
      `<img src="${tracker}/raw.png">`,
      '',
      '<a href="JaVaScRiPt:window.__pwned=4">raw link</a> <svg onload="window.__pwned=5"></svg> <iframe src="javascript:window.__pwned=6"></iframe>',
      '',
      '<div onclick="window.__pwned=7" >overlay</div>',
      '',
      'The end.',
    ].join('\n');
    const hearth = await browser.hearth();
    // Small chunks so the hostile markup also passes through half-finished stream renders.
    hearth.llm.script({ content: hostile, chunkSize: 7, delayMs: 2 });
    const sessionId = await hearth.createSession();
    // The page's Content-Security-Policy may refuse the remote image; that refusal is logged as a console error.
    const page = await browser.openPage(hearth, { hash: sessionId, allowErrors: [/Refused to load the image .*Content Security Policy/] });
    await waitForApp(page);
    await sendMessage(page, 'Hi <img src=x onerror="window.__pwned=8"> <b>bold?</b>');
    await waitForIdle(page);
    await page.waitForFunction((selector) => (document.querySelector(selector)?.textContent ?? '').includes('The end.'), sel.assistant);

    const inspect = () =>
      page.evaluate((transcript) => {
        const root = document.querySelector(transcript)!;
        const all = [...root.querySelectorAll('*')];
        return {
          pwned: (window as any).__pwned,
          scripts: root.querySelectorAll('script').length,
          frames: root.querySelectorAll('iframe, object, embed').length,
          handlers: all.flatMap((node) => [...node.attributes].filter((attribute) => /^on/i.test(attribute.name)).map((attribute) => `${node.tagName}[${attribute.name}]`)),
          javascriptUrls: all.flatMap((node) =>
            ['href', 'src', 'xlink:href', 'action', 'formaction']
              .map((name) => node.getAttribute(name))
              .filter((value): value is string => value !== null && /^\s*javascript:/i.test(value)),
          ),
          links: [...root.querySelectorAll('a')].map((link) => ({ text: link.textContent, href: link.getAttribute('href') })),
          userText: root.querySelector('[data-role="user"]')?.textContent ?? '',
        };
      }, sel.transcript);

    const checkInert = async () => {
      const seen = await inspect();
      expect(seen.pwned).toBeUndefined();
      expect(seen.scripts).toBe(0);
      expect(seen.frames).toBe(0);
      expect(seen.handlers).toEqual([]);
      expect(seen.javascriptUrls).toEqual([]);
      for (const link of seen.links) expect(link.href ?? '').not.toMatch(/^\s*javascript:/i);
      // The user's own text is shown as text, not as markup.
      expect(seen.userText).toContain('<img src=x onerror="window.__pwned=8">');
      expect(seen.userText).toContain('<b>bold?</b>');
      return seen;
    };

    await checkInert();
    await screenshot(page, 'hostile-answer-inert');
    const clickable = page.locator(sel.assistant).getByText('click me');
    if ((await clickable.count()) > 0) await clickable.first().click();
    expect(await page.evaluate(() => (window as any).__pwned)).toBeUndefined();

    // The history path (after a reload) must be just as inert.
    await page.reload();
    await waitForApp(page);
    await page.waitForFunction((selector) => (document.querySelector(selector)?.textContent ?? '').includes('The end.'), sel.assistant);
    await checkInert();

    await page.waitForLoadState('networkidle');
    expect(requests).toEqual([]);
  });
});
