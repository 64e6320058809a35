import type { ExtractedDocument } from './extract/extracted-document.ts';

/** A passage before it is stored: its place, page and heading path (" › " joined), and its text. */
export interface PassageDraft {
  ordinal: number;
  page: number | null;
  heading: string | null;
  text: string;
}

export interface PassageOptions {
  /** A passage is closed at the first paragraph end past this length. */
  targetChars?: number;
  /** No passage is longer: a longer paragraph is cut at sentence, then word, boundaries. */
  maxChars?: number;
  /** Characters of the previous passage (of the same page and heading) repeated at the start of the next. */
  overlapChars?: number;
}

export const headingSeparator = ' › ';

/** What is embedded and indexed for a passage: its heading path, then its text. */
export function indexedText(passage: { heading: string | null; text: string }): string {
  return passage.heading === null ? passage.text : `${passage.heading}\n${passage.text}`;
}

/**
 * A document's blocks as passages of about `targetChars`: never across a page, and a heading
 * always starts a new one, so each passage has one page and one heading path.
 */
export function splitIntoPassages(document: ExtractedDocument, options: PassageOptions = {}): PassageDraft[] {
  const targetChars = options.targetChars ?? 900;
  const maxChars = Math.max(options.maxChars ?? 1500, targetChars);
  const overlapChars = Math.min(options.overlapChars ?? 0, Math.floor(targetChars / 2));
  const passages: PassageDraft[] = [];
  // `carried` is the overlap from the passage before: it never makes a passage on its own.
  let open: { page: number | null; heading: string | null; carried: string; parts: string[]; length: number } | undefined;

  const close = (): string => {
    if (!open || open.parts.length === 0) return '';
    const text = [open.carried, ...open.parts].filter((part) => part !== '').join('\n\n');
    passages.push({ ordinal: passages.length, page: open.page, heading: open.heading, text });
    return overlapChars > 0 ? tail(text, overlapChars) : '';
  };
  const start = (page: number | null, heading: string | null, carried: string) => {
    open = { page, heading, carried, parts: [], length: carried.length };
  };

  for (const block of document.blocks) {
    const heading = block.headingPath.length === 0 ? null : block.headingPath.join(headingSeparator);
    if (block.kind === 'heading' || !open || open.page !== block.page || open.heading !== heading) {
      close();
      start(block.page, heading, '');
      if (block.kind === 'heading') continue;
    }
    for (const piece of pieces(block.text, maxChars - overlapChars - 2)) {
      if (open!.parts.length > 0 && open!.length + piece.length + 2 > maxChars) start(block.page, heading, close());
      open!.parts.push(piece);
      open!.length += piece.length + 2;
      if (open!.length >= targetChars) start(block.page, heading, close());
    }
  }
  close();
  return passages;
}

/** A paragraph cut into pieces of at most `maxChars`, at sentence ends where it can, else at spaces. */
function pieces(text: string, maxChars: number): string[] {
  const trimmed = text.trim();
  if (trimmed.length <= maxChars) return trimmed === '' ? [] : [trimmed];
  const result: string[] = [];
  let rest = trimmed;
  while (rest.length > maxChars) {
    const window = rest.slice(0, maxChars);
    const sentenceEnd = Math.max(window.lastIndexOf('. '), window.lastIndexOf('? '), window.lastIndexOf('! '));
    const space = window.lastIndexOf(' ');
    const cut = sentenceEnd > maxChars / 2 ? sentenceEnd + 1 : space > maxChars / 2 ? space : maxChars;
    result.push(rest.slice(0, cut).trim());
    rest = rest.slice(cut).trim();
  }
  if (rest !== '') result.push(rest);
  return result;
}

/** The last `chars` of a text, from a word boundary. */
function tail(text: string, chars: number): string {
  if (text.length <= chars) return text;
  const slice = text.slice(text.length - chars);
  const space = slice.indexOf(' ');
  return (space >= 0 ? slice.slice(space + 1) : slice).trim();
}
