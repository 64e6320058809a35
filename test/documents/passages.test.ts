// How an extracted document is cut into passages (issue 39): never across a page, a heading
// always starts one, and each keeps its heading path.
import { describe, expect, it } from 'vitest';
import type { ExtractedBlock, ExtractedDocument } from '../../src/documents/extract/extract-document.ts';
import { indexedText, splitIntoPassages } from '../../src/documents/passages.ts';

function paragraph(page: number | null, headingPath: string[], text: string): ExtractedBlock {
  return { page, headingPath, text, kind: 'paragraph' };
}

function heading(page: number | null, headingPath: string[]): ExtractedBlock {
  return { page, headingPath, text: headingPath.at(-1)!, kind: 'heading' };
}

function pdf(blocks: ExtractedBlock[]): ExtractedDocument {
  return { mediaType: 'application/pdf', pages: Math.max(...blocks.map((block) => block.page ?? 0)), blocks };
}

/** A sentence of about `chars` characters, numbered so each is told apart. */
function sentence(number: number, chars = 100): string {
  const start = `Sentence ${number} `;
  return `${start}${'word '.repeat(Math.ceil((chars - start.length) / 5))}`.slice(0, chars - 1).trim() + '.';
}

describe('splitIntoPassages', () => {
  it('keeps short paragraphs of one page and heading together, and starts again at a heading and at a page', () => {
    const passages = splitIntoPassages(
      pdf([
        heading(1, ['Warranty']),
        paragraph(1, ['Warranty'], 'Two years.'),
        paragraph(1, ['Warranty'], 'From purchase.'),
        heading(1, ['Warranty', 'Exclusions']),
        paragraph(1, ['Warranty', 'Exclusions'], 'Water damage.'),
        paragraph(2, ['Warranty', 'Exclusions'], 'Misuse.'),
        heading(2, ['Filters']),
        paragraph(2, ['Filters'], 'CF-22.'),
      ]),
    );
    expect(passages).toEqual([
      { ordinal: 0, page: 1, heading: 'Warranty', text: 'Two years.\n\nFrom purchase.' },
      { ordinal: 1, page: 1, heading: 'Warranty › Exclusions', text: 'Water damage.' },
      { ordinal: 2, page: 2, heading: 'Warranty › Exclusions', text: 'Misuse.' },
      { ordinal: 3, page: 2, heading: 'Filters', text: 'CF-22.' },
    ]);
  });

  it('closes a passage at the first paragraph end past the target, and never lets one pass the maximum', () => {
    const blocks = Array.from({ length: 30 }, (_, index) => paragraph(null, ['Recipes'], sentence(index, 200)));
    const passages = splitIntoPassages({ mediaType: 'text/markdown', pages: null, blocks }, { targetChars: 900, maxChars: 1500 });
    expect(passages.length).toBeGreaterThan(5);
    for (const passage of passages.slice(0, -1)) {
      expect(passage.text.length).toBeGreaterThanOrEqual(880);
      expect(passage.text.length).toBeLessThanOrEqual(1500);
    }
    // Nothing lost, nothing repeated, in order.
    expect(passages.map((passage) => passage.text).join('\n\n')).toBe(blocks.map((block) => block.text).join('\n\n'));
    expect(passages.map((passage) => passage.ordinal)).toEqual(passages.map((_, index) => index));
  });

  it('cuts a paragraph longer than the maximum at sentence ends, and a sentence with none at spaces', () => {
    const sentences = Array.from({ length: 40 }, (_, index) => sentence(index, 100));
    const endless = 'and '.repeat(1000).trim();
    const passages = splitIntoPassages({ mediaType: 'text/plain', pages: null, blocks: [paragraph(null, [], sentences.join(' ')), paragraph(null, [], endless)] }, { targetChars: 900, maxChars: 1500 });
    for (const passage of passages) expect(passage.text.length).toBeLessThanOrEqual(1500);
    const sentencePassages = passages.filter((passage) => passage.text.startsWith('Sentence'));
    for (const passage of sentencePassages) expect(passage.text).toMatch(/^Sentence \d+ .*\.$/s);
    expect(passages.filter((passage) => passage.text.startsWith('and')).every((passage) => /^and( and)*$/.test(passage.text.replace(/\n\n/g, ' ')))).toBe(true);
  });

  it('repeats the end of a passage at the start of the next when asked, within the same page and heading only', () => {
    const blocks = [...Array.from({ length: 6 }, (_, index) => paragraph(1, ['A'], sentence(index, 300))), paragraph(2, ['A'], 'Page two.')];
    const passages = splitIntoPassages(pdf(blocks), { targetChars: 600, maxChars: 1000, overlapChars: 100 });
    const first = passages[0]!;
    const second = passages[1]!;
    const carried = second.text.slice(0, second.text.indexOf('\n\n'));
    expect(carried.length).toBeGreaterThan(50);
    expect(carried.length).toBeLessThanOrEqual(100);
    expect(first.text.endsWith(carried)).toBe(true);
    expect(passages.at(-1)).toMatchObject({ page: 2, text: 'Page two.' });
    for (const passage of passages) expect(passage.text.length).toBeLessThanOrEqual(1000);
  });

  it('makes no passage of headings alone, and none of an empty document', () => {
    expect(splitIntoPassages(pdf([heading(1, ['Cover']), heading(1, ['Cover', 'Title'])]))).toEqual([]);
    expect(splitIntoPassages({ mediaType: 'text/plain', pages: null, blocks: [] })).toEqual([]);
  });
});

describe('indexedText', () => {
  it('puts the heading path above the text, so a search for the heading finds its passages', () => {
    expect(indexedText({ heading: 'Warranty › Exclusions', text: 'Water damage.' })).toBe('Warranty › Exclusions\nWater damage.');
    expect(indexedText({ heading: null, text: 'Water damage.' })).toBe('Water damage.');
  });
});
