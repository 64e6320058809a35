import type { ExtractedBlock, ExtractionResult } from './extracted-document.ts';
import { documentMediaTypes } from './detect-media-type.ts';

/** Paragraphs of a text, split at blank lines (line breaks inside one are kept). */
export function paragraphsOf(text: string): string[] {
  return text
    .replace(/\r\n?/g, '\n')
    .split(/\n[ \t]*\n+/)
    .map((paragraph) => paragraph.replace(/[ \t]+$/gm, '').trim())
    .filter((paragraph) => paragraph !== '');
}

/** Plain text: paragraphs, no headings, no pages. */
export function extractPlainText(text: string): ExtractionResult {
  const blocks: ExtractedBlock[] = paragraphsOf(text.replace(/^\uFEFF/, '')).map((paragraph) => ({ page: null, headingPath: [], text: paragraph, kind: 'paragraph' }));
  if (blocks.length === 0) return { success: false, error: 'The file holds no text.' };
  return { success: true, document: { mediaType: documentMediaTypes.text, pages: null, blocks } };
}
