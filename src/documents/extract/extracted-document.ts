/** What a document's reader gives: its blocks of text in order, with their pages and headings. */

/**
 * One heading or paragraph of a document. `headingPath` is the headings above it, outermost first
 * (a heading's own path ends with itself); `page` is 1-based, null for formats without pages.
 */
export interface ExtractedBlock {
  page: number | null;
  headingPath: string[];
  text: string;
  kind: 'heading' | 'paragraph';
}

export interface ExtractedDocument {
  mediaType: string;
  /** PDFs' page count; null for formats without pages. */
  pages: number | null;
  blocks: ExtractedBlock[];
}

/** A failure is data: `error` says why in words a person can act on. */
export type ExtractionResult = { success: true; document: ExtractedDocument } | { success: false; error: string };
