import type { ExtractedBlock } from './extracted-document.ts';
import { HeadingTrail } from './heading-trail.ts';

/** A paragraph as poppler laid it out: its page, its text and the height of its lines (about its font size). */
interface LaidOutBlock {
  page: number;
  text: string;
  lineHeights: number[];
  /** In the top or bottom margin of its page, where headers and footers are. */
  inMargin: boolean;
}

const entities: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };
/** Longer than this, a block of large type is a paragraph all the same (a pull quote, a title page's blurb). */
const longestHeading = 160;
/** Lines this much taller than the body's are a heading's. */
const headingScale = 1.15;
const deepestHeading = 4;
/** Page headers and footers are at most this long. */
const runningLineLength = 100;
/** The top and bottom eighth-or-so of a page, where running headers and footers sit. */
const marginShare = 0.08;

/**
 * The pages of `pdftotext -bbox-layout` (XHTML: page › flow › block › line › word) as blocks.
 * A block whose lines are clearly taller than the body text's is a heading, its level by its size
 * among the document's heading sizes; the PDF's own structure tags are not read (pdftotext does not give them).
 */
export function pdfLayoutBlocks(xhtml: string): { pages: number; words: number; blocks: ExtractedBlock[] } {
  const laidOut: LaidOutBlock[] = [];
  let pages = 0;
  let words = 0;
  let pageHeight = 0;
  let block: LaidOutBlock | undefined;
  let line: { words: string[]; height: number } | undefined;
  let lines: string[] = [];
  for (const match of xhtml.matchAll(/<(\/?)(page|block|line|word)\b([^>]*)>([^<]*)/g)) {
    const [, closing, tag, attributes = '', following = ''] = match;
    if (tag === 'page' && !closing) {
      pages += 1;
      pageHeight = attribute(attributes, 'height');
    } else if (tag === 'block' && !closing) {
      const top = attribute(attributes, 'yMin');
      const bottom = attribute(attributes, 'yMax');
      block = { page: pages, text: '', lineHeights: [], inMargin: bottom < pageHeight * marginShare || top > pageHeight * (1 - marginShare) };
      lines = [];
    } else if (tag === 'block' && closing && block) {
      block.text = joinLines(lines);
      if (block.text !== '') laidOut.push(block);
      block = undefined;
    } else if (tag === 'line' && !closing) line = { words: [], height: height(attributes) };
    else if (tag === 'line' && closing && line && block) {
      lines.push(line.words.join(' '));
      block.lineHeights.push(line.height);
      line = undefined;
    } else if (tag === 'word' && !closing && line) {
      line.words.push(decode(following));
      words += 1;
    }
  }
  return { pages, words, blocks: withHeadings(withoutRunningLines(laidOut, pages)) };
}

/**
 * Without the page headers and footers ("Manual KH-60", "Page 3 of 40"): short blocks in a page's
 * margin that come back, numbers aside, on more than half the pages of a document of three or more.
 */
function withoutRunningLines(laidOut: LaidOutBlock[], pages: number): LaidOutBlock[] {
  if (pages < 3) return laidOut;
  const shape = (block: LaidOutBlock) => (block.inMargin && block.text.length <= runningLineLength ? block.text.replace(/\d+/g, '#') : undefined);
  const pagesOf = new Map<string, Set<number>>();
  for (const block of laidOut) {
    const key = shape(block);
    if (key !== undefined) pagesOf.set(key, (pagesOf.get(key) ?? new Set()).add(block.page));
  }
  return laidOut.filter((block) => {
    const key = shape(block);
    return key === undefined || pagesOf.get(key)!.size <= pages / 2;
  });
}

function withHeadings(laidOut: LaidOutBlock[]): ExtractedBlock[] {
  const body = bodyHeight(laidOut);
  const isHeading = (block: LaidOutBlock) =>
    block.text.length <= longestHeading && block.lineHeights.length <= 3 && Math.min(...block.lineHeights) >= body * headingScale;
  const sizes = [...new Set(laidOut.filter(isHeading).map((block) => rounded(Math.min(...block.lineHeights))))].sort((a, b) => b - a);
  const trail = new HeadingTrail();
  return laidOut.map((block): ExtractedBlock => {
    if (!isHeading(block)) return { page: block.page, headingPath: trail.path, text: block.text, kind: 'paragraph' };
    const level = Math.min(sizes.indexOf(rounded(Math.min(...block.lineHeights))) + 1, deepestHeading);
    return { page: block.page, headingPath: trail.enter(level, block.text), text: block.text, kind: 'heading' };
  });
}

/** The line height most of the text is set in (weighted by characters). */
function bodyHeight(laidOut: LaidOutBlock[]): number {
  const weight = new Map<number, number>();
  for (const block of laidOut) {
    const perLine = block.text.length / Math.max(1, block.lineHeights.length);
    for (const lineHeight of block.lineHeights) weight.set(rounded(lineHeight), (weight.get(rounded(lineHeight)) ?? 0) + perLine);
  }
  let best = 0;
  let bestWeight = -1;
  for (const [size, total] of weight) {
    if (total > bestWeight) [best, bestWeight] = [size, total];
  }
  return best;
}

/** Lines of a block as one paragraph; a word broken by a hyphen at a line's end is joined. */
function joinLines(lines: string[]): string {
  let text = '';
  for (const line of lines.map((each) => each.trim()).filter((each) => each !== '')) {
    if (text === '') text = line;
    else if (/[a-z\u00e0-\u00ff]-$/.test(text) && /^[a-z\u00e0-\u00ff]/.test(line)) text = text.slice(0, -1) + line;
    else text += ` ${line}`;
  }
  return text;
}

function height(attributes: string): number {
  return attribute(attributes, 'yMax') - attribute(attributes, 'yMin');
}

function attribute(attributes: string, name: string): number {
  return Number(new RegExp(`\\b${name}="([\\d.]+)"`).exec(attributes)?.[1] ?? 0);
}

function rounded(value: number): number {
  return Math.round(value * 2) / 2;
}

function decode(text: string): string {
  return text.replace(/&(#x[\da-f]+|#\d+|\w+);/gi, (whole, name: string) => {
    if (name[0] === '#') return String.fromCodePoint(name[1]?.toLowerCase() === 'x' ? parseInt(name.slice(2), 16) : Number(name.slice(1)));
    return entities[name] ?? whole;
  });
}
