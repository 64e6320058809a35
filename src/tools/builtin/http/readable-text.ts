import { loadHtmlLibraries, type HtmlLibraries } from './html-libraries.ts';

/** The parts of a DOM node the text conversion reads (linkedom's nodes have them). */
interface DomNode {
  nodeType: number;
  nodeName: string;
  textContent: string | null;
  childNodes: ArrayLike<DomNode>;
  previousElementSibling?: DomNode | null;
}

export interface ReadableText {
  title: string;
  text: string;
}

const elementNode = 1;
const textNode = 3;

const skippedElements = new Set(['head', 'title', 'script', 'style', 'noscript', 'template', 'svg', 'iframe', 'canvas', 'object', 'select']);
const paragraphElements = new Set([
  'address', 'article', 'aside', 'blockquote', 'details', 'dialog', 'div', 'dl', 'fieldset', 'figcaption', 'figure',
  'footer', 'form', 'header', 'hr', 'main', 'nav', 'ol', 'p', 'section', 'summary', 'table', 'ul',
]);
const lineElements = new Set(['li', 'dt', 'dd', 'tr', 'caption']);
const alwaysRemovedSelector = 'script, style, noscript, template, nav, [role="navigation"]';

/** linkedom builds no implied elements, so a fragment without <html> gets an explicit body. */
function parseDocument(html: string, { parseHTML }: HtmlLibraries) {
  const { document } = parseHTML(html);
  if (document.documentElement?.nodeName === 'HTML') return document;
  return parseHTML(`<!doctype html><html><body>${html}</body></html>`).document;
}

/** Menus never hold the content; page-level headers and footers neither, but an article's own ones may. */
function parseWithoutBoilerplate(html: string, libraries: HtmlLibraries) {
  const document = parseDocument(html, libraries);
  for (const element of document.querySelectorAll(alwaysRemovedSelector)) element.remove();
  for (const element of document.querySelectorAll('header, footer')) {
    if (!element.closest('article, main')) element.remove();
  }
  return document;
}

/** The title and main content of an HTML page as plain text with paragraph breaks. */
export async function htmlToReadableText(html: string): Promise<ReadableText> {
  const libraries = await loadHtmlLibraries();
  const { Readability } = libraries;
  const document = parseWithoutBoilerplate(html, libraries);
  const pageTitle = collapse(document.title || document.querySelector('title')?.textContent);
  const article = new Readability<DomNode>(document, { serializer: (node) => node as unknown as DomNode }).parse();
  if (article?.content && article.textContent?.trim()) {
    return { title: collapse(article.title ?? '') || pageTitle, text: nodeToText(article.content) };
  }
  // Readability rewrites the document it reads, so the fallback starts from a fresh parse.
  const fresh = parseWithoutBoilerplate(html, libraries);
  return { title: pageTitle, text: nodeToText(fresh.body ?? fresh.documentElement) };
}

function nodeToText(root: DomNode): string {
  const writer = new TextWriter();
  writeNode(root, writer);
  return writer.toString();
}

function writeNode(node: DomNode, writer: TextWriter): void {
  if (node.nodeType === textNode) {
    writer.inline(node.textContent ?? '');
    return;
  }
  if (node.nodeType !== elementNode) return;
  const name = node.nodeName.toLowerCase();
  if (skippedElements.has(name)) return;
  if (name === 'br') return writer.lineBreak();
  if (name === 'pre') {
    writer.breakBefore(2);
    writer.verbatim(node.textContent ?? '');
    writer.breakBefore(2);
    return;
  }
  const heading = /^h([1-6])$/.exec(name);
  const breaks = heading || paragraphElements.has(name) ? 2 : lineElements.has(name) ? 1 : 0;
  writer.breakBefore(breaks);
  if (heading) writer.inline(`${'#'.repeat(Number(heading[1]))} `);
  if (name === 'li') writer.inline('- ');
  if ((name === 'td' || name === 'th') && node.previousElementSibling) writer.inline(' | ');
  for (const child of Array.from(node.childNodes)) writeNode(child, writer);
  writer.breakBefore(breaks);
}

/** Joins inline text with single spaces and blocks with at most one blank line. */
class TextWriter {
  private parts: string[] = [];
  private pendingBreaks = 0;
  private pendingSpace = false;
  private empty = true;

  inline(text: string): void {
    const words = collapse(text);
    if (/^\s/.test(text)) this.pendingSpace = true;
    if (words !== '') {
      this.flush();
      this.parts.push(words);
      this.empty = false;
    }
    if (/\s$/.test(text)) this.pendingSpace = true;
  }

  verbatim(text: string): void {
    this.flush();
    this.parts.push(text.replace(/^\n+|\s+$/g, ''));
    this.empty = false;
  }

  breakBefore(count: number): void {
    if (!this.empty) this.pendingBreaks = Math.max(this.pendingBreaks, count);
  }

  lineBreak(): void {
    if (!this.empty) this.pendingBreaks = Math.min(2, this.pendingBreaks + 1);
  }

  toString(): string {
    return this.parts.join('');
  }

  private flush(): void {
    if (this.pendingBreaks > 0) this.parts.push('\n'.repeat(this.pendingBreaks));
    else if (this.pendingSpace && !this.empty) this.parts.push(' ');
    this.pendingBreaks = 0;
    this.pendingSpace = false;
  }
}

function collapse(text: string | null | undefined): string {
  return (text ?? '').replace(/\s+/g, ' ').trim();
}
