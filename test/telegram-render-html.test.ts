import { describe, expect, it } from 'vitest';
import { renderTelegramHtml } from '../src/channels/telegram/render-html.ts';
import { parseTelegramHtml } from './support/telegram-html.ts';

function parsed(html: string) {
  const result = parseTelegramHtml(html);
  if (!result.ok) throw new Error(`${result.description}\n${html}`);
  return result;
}

describe('renderTelegramHtml', () => {
  it('renders emphasis, code and links to Telegram tags', () => {
    expect(renderTelegramHtml('Some **bold**, *italic*, ~~gone~~ and `a < b` with [docs](https://example.com/?a=1&b=2).')).toBe(
      'Some <b>bold</b>, <i>italic</i>, <s>gone</s> and <code>a &lt; b</code> with <a href="https://example.com/?a=1&amp;b=2">docs</a>.',
    );
  });

  it('sends raw HTML from the model as text', () => {
    const html = renderTelegramHtml('Look: <script>alert("x")</script> and <b onclick="x">bold?</b>\n\n<div>block</div>');
    expect(html).not.toMatch(/<script|<div|<b /);
    expect(parsed(html).text).toBe('Look: <script>alert("x")</script> and <b onclick="x">bold?</b>\n\n<div>block</div>');
  });

  it('keeps only http(s) and tg links', () => {
    expect(renderTelegramHtml('[a](javascript:alert(1)) [b](file:///etc/passwd) [c](tg://user?id=1) [d](http://x.org)')).toBe(
      'a b <a href="tg://user?id=1">c</a> <a href="http://x.org">d</a>',
    );
  });

  it('writes headings, lists, tables and rules as plain lines', () => {
    const html = renderTelegramHtml('# Plan\n\n- one\n- two\n  1. sub\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n---\n\n- [x] done');
    expect(html).toBe('<b>Plan</b>\n\n• one\n• two\n    1. sub\n\n<b>a | b</b>\n1 | 2\n\n———\n\n☑ done');
  });

  it('puts code blocks in pre with their language, escaped', () => {
    expect(renderTelegramHtml('```ts\nif (a < b && c) {}\n```')).toBe('<pre><code class="language-ts">if (a &lt; b &amp;&amp; c) {}</code></pre>');
  });

  it('does not nest blockquotes, which Telegram refuses', () => {
    const html = renderTelegramHtml('> outer\n> > inner');
    expect(parsed(html).entities.filter((entity) => entity.type === 'blockquote')).toHaveLength(1);
  });

  it('is well-formed at every prefix of a streamed answer', () => {
    const answer = '# Title\n\nSome **bold and *nested* text**, `code`, [link](https://a.b/c).\n\n```py\nprint("<hi>")\n```\n\n> quote & more\n\n1. first\n2. second';
    for (let length = 0; length <= answer.length; length += 1) parsed(renderTelegramHtml(answer.slice(0, length)) || 'x');
  });
});
