import { describe, expect, it } from 'vitest';
import { renderTelegramHtml } from '../src/channels/telegram/render-html.ts';
import { splitTelegramHtml, telegramMessageLimit } from '../src/channels/telegram/split-message.ts';
import { parseTelegramHtml } from './support/telegram-html.ts';

function textOf(html: string): string {
  const result = parseTelegramHtml(html);
  if (!result.ok) throw new Error(`${result.description}\n${html.slice(0, 200)}…${html.slice(-200)}`);
  return result.text;
}

function mixedMarkdown(length: number): string {
  const parts = [
    '## Section with **bold** & <escaped> text\n\n',
    'A paragraph with *italic words*, `inline < code`, and a [link](https://example.com/path?x=1&y=2) that runs on for a while so that lines get long enough. ',
    '**This bold run goes on and on across what might be a split point, with more words inside it than one would expect, and then some.**\n\n',
    '```js\nfor (let i = 0; i < 10; i++) {\n  console.log("<" + i + ">");\n}\n```\n\n',
    '> A quote with **bold** inside it, long enough to matter, and an & sign.\n\n',
    '- item one with `code`\n- item two with *emphasis*\n  1. nested\n\n',
  ];
  let markdown = '';
  for (let index = 0; markdown.length < length; index += 1) markdown += parts[index % parts.length];
  return markdown.slice(0, length);
}

describe('splitTelegramHtml', () => {
  it('leaves a short message whole', () => {
    expect(splitTelegramHtml('<b>hi</b>')).toEqual(['<b>hi</b>']);
  });

  it('splits 10,000 characters of mixed Markdown into well-formed pieces within the limit', () => {
    const html = renderTelegramHtml(mixedMarkdown(10_000));
    expect(html.length).toBeGreaterThan(10_000);
    const pieces = splitTelegramHtml(html);
    expect(pieces.length).toBeGreaterThanOrEqual(3);
    for (const piece of pieces) expect(piece.length).toBeLessThanOrEqual(telegramMessageLimit);
    expect(pieces.map(textOf).join('')).toBe(textOf(html));
  });

  it('closes tags open at a split and opens them again, attributes included', () => {
    const html = `<a href="https://x.org/?a&amp;b"><b>${'word '.repeat(40)}</b></a>`;
    const pieces = splitTelegramHtml(html, 60);
    expect(pieces.length).toBeGreaterThan(3);
    for (const piece of pieces) {
      expect(piece.length).toBeLessThanOrEqual(60);
      expect(piece).toMatch(/^<a href="https:\/\/x\.org\/\?a&amp;b"><b>.*<\/b><\/a>$/s);
    }
    expect(pieces.map(textOf).join('')).toBe(textOf(html));
  });

  it('prefers a paragraph break, then a line break, then a space', () => {
    const paragraphs = splitTelegramHtml(`${'a'.repeat(30)}\n\n${'b'.repeat(20)} ${'c'.repeat(20)}\n${'d'.repeat(20)}`, 50);
    expect(paragraphs[0]).toBe(`${'a'.repeat(30)}\n\n`);
    const lines = splitTelegramHtml(`${'a'.repeat(30)}\n${'b'.repeat(10)} ${'c'.repeat(20)}`, 50);
    expect(lines[0]).toBe(`${'a'.repeat(30)}\n`);
    const words = splitTelegramHtml(`${'a'.repeat(30)} ${'b'.repeat(30)}`, 50);
    expect(words[0]).toBe(`${'a'.repeat(30)} `);
  });

  it('never cuts an entity or a surrogate pair', () => {
    const html = '&amp;😀'.repeat(50);
    const pieces = splitTelegramHtml(html, 17);
    for (const piece of pieces) {
      expect(piece.length).toBeLessThanOrEqual(17);
      textOf(piece);
      expect(piece).not.toMatch(/[\uD800-\uDBFF]$|^[\uDC00-\uDFFF]/);
    }
    expect(pieces.join('')).toBe(html);
  });
});
