import type { ExtractedBlock } from './extracted-document.ts';
import { HeadingTrail } from './heading-trail.ts';

/** A paragraph as poppler laid it out: its page, its text and the height of its lines (about its font size). */
interface LaidOutBlock {
  page: number;
  text: string;
  lineHeights: number[];
}

const entities: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };
/** Longer than this, a block of large type is a paragraph all the same (a pull quote, a title page's blurb). */
const longestHeading = 160;
/** Lines this much taller than the body's are a heading's. */
const headingScale = 1.15;
const deepestHeading = 4;

/**
 * The pages of `pdftotext -bbox-layout` (XHTML: page › flow › block › line › word) as blocks.
 * A block whose lines are clearly taller than the body text's is a heading, its level by its size
 * among the document's heading sizes; the PDF's own structure tags are not read (pdftotext does not give them).
 */
export function pdfLayoutBlocks(xhtml: string): { pages: number; words: number; blocks: ExtractedBlock[] } {
  const laidOut: LaidOutBlock[] = [];
  let pages = 0;
  let words = 0;
  let block: LaidOutBlock | undefined;
  let line: { words: string[]; height: number } | undefined;
  let lines: string[] = [];
  for (const match of xhtml.matchAll(/<(\/?)(page|block|line|word)\b([^>]*)>([^<]*)/g)) {
    const [, closing, tag, attributes = '', following = ''] = match;
    if (tag === 'page' && !closing) pages += 1;
    else if (tag === 'block' && !closing) {
      block = { page: pages, text: '', lineHeights: [] };
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
  return { pages, words, blocks: withHeadings(laidOut) };
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
  const yMin = Number(/yMin="([\d.]+)"/.exec(attributes)?.[1] ?? 0);
  const yMax = Number(/yMax="([\d.]+)"/.exec(attributes)?.[1] ?? 0);
  return yMax - yMin;
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
