import { documentMediaTypes } from './detect-media-type.ts';
import type { ExtractedBlock, ExtractionResult } from './extracted-document.ts';
import { collapseSpace, HeadingTrail } from './heading-trail.ts';

/** Elements whose text is never the document's. */
const dropped = 'script, style, noscript, template, svg, canvas, iframe, object, head, nav, button, select';
/** Elements read whole as one paragraph. */
const paragraphs = new Set(['P', 'LI', 'PRE', 'BLOCKQUOTE', 'TD', 'TH', 'DT', 'DD', 'CAPTION', 'FIGCAPTION', 'ADDRESS', 'SUMMARY']);
/** Elements that end the text run before them (their own text is read inside). */
const boundaries = new Set(['DIV', 'SECTION', 'ARTICLE', 'MAIN', 'HEADER', 'FOOTER', 'ASIDE', 'UL', 'OL', 'DL', 'TABLE', 'TR', 'TBODY', 'THEAD', 'FIGURE', 'HR', 'BR', 'DETAILS', 'BODY']);

/** HTML (and what mammoth makes of a Word document): h1–h6 as nested headings, block elements as paragraphs; scripts and styles dropped. */
export async function extractHtml(html: string, mediaType: string = documentMediaTypes.html): Promise<ExtractionResult> {
  const blocks = await htmlBlocks(html, []);
  if (blocks.length === 0) return { success: false, error: 'The page holds no text.' };
  return { success: true, document: { mediaType, pages: null, blocks } };
}

/** The blocks of an HTML text, under the headings of `within` (an e-mail's subject). */
export async function htmlBlocks(html: string, within: string[]): Promise<ExtractedBlock[]> {
  const { parseHTML } = await import('linkedom');
  const { document } = parseHTML(html.includes('<html') ? html : `<!doctype html><html><body>${html}</body></html>`);
  for (const element of document.querySelectorAll(dropped)) element.remove();
  const trail = new HeadingTrail();
  const blocks: ExtractedBlock[] = [];
  let run = '';
  const flush = () => {
    const text = collapseSpace(run);
    run = '';
    if (text !== '') blocks.push({ page: null, headingPath: [...within, ...trail.path], text, kind: 'paragraph' });
  };
  const visit = (node: Node) => {
    for (const child of Array.from(node.childNodes)) {
      if (child.nodeType === 3) {
        run += child.textContent ?? '';
        continue;
      }
      if (child.nodeType !== 1) continue;
      const tag = (child as Element).tagName.toUpperCase();
      const level = /^H([1-6])$/.exec(tag)?.[1];
      if (level !== undefined) {
        flush();
        const text = collapseSpace(child.textContent ?? '');
        if (text !== '') blocks.push({ page: null, headingPath: [...within, ...trail.enter(Number(level), text)], text, kind: 'heading' });
      } else if (paragraphs.has(tag)) {
        flush();
        run = child.textContent ?? '';
        flush();
      } else if (boundaries.has(tag)) {
        flush();
        visit(child);
        flush();
      } else {
        visit(child);
      }
    }
  };
  visit(document.body ?? document.documentElement);
  flush();
  return blocks;
}
