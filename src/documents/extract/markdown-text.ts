import type { Token } from 'marked';
import { documentMediaTypes } from './detect-media-type.ts';
import type { ExtractedBlock, ExtractionResult } from './extracted-document.ts';
import { collapseSpace, HeadingTrail } from './heading-trail.ts';

/** Markdown: `#` headings (marked's lexer, so a `#` in code is not one) nest; every other block is a paragraph as written. */
export async function extractMarkdown(source: string): Promise<ExtractionResult> {
  const { lexer } = await import('marked');
  const trail = new HeadingTrail();
  const blocks: ExtractedBlock[] = [];
  const visit = (tokens: Token[]) => {
    for (const token of tokens) {
      if (token.type === 'heading') {
        const text = collapseSpace(token.text as string);
        if (text !== '') blocks.push({ page: null, headingPath: trail.enter(token.depth as number, text), text, kind: 'heading' });
      } else if (token.type !== 'space' && token.type !== 'hr' && token.type !== 'def') {
        const text = (token.type === 'paragraph' || token.type === 'text' ? (token.text as string) : token.raw).trim();
        if (text !== '') blocks.push({ page: null, headingPath: trail.path, text, kind: 'paragraph' });
      }
    }
  };
  visit(lexer(source.replace(/^\uFEFF/, '')));
  if (blocks.length === 0) return { success: false, error: 'The Markdown file holds no text.' };
  return { success: true, document: { mediaType: documentMediaTypes.markdown, pages: null, blocks } };
}
