import DOMPurify from '/vendor/dompurify.js';
import hljs from '/vendor/highlight.js';
import { Marked } from '/vendor/marked.js';
import { element } from './dom.js';

/** Longest unlabelled block that is still checked for JSON (parsing costs time on every render). */
const jsonCheckLimit = 100_000;

function escapeHtml(text) {
  return text.replace(/[&<>"']/g, (character) => `&#${character.charCodeAt(0)};`);
}

/** Guessing a language colours plain output (logs, tool results) at random: only JSON is recognised without a label. */
function languageOf(code, fenced) {
  if (fenced) return fenced;
  const text = code.trim();
  if (text.length > jsonCheckLimit || !/^[[{][\s\S]*[\]}]$/.test(text)) return '';
  try {
    JSON.parse(text);
    return 'json';
  } catch {
    return '';
  }
}

function highlighted(code, language) {
  if (language && hljs.getLanguage(language)) return hljs.highlight(code, { language, ignoreIllegals: true }).value;
  return escapeHtml(code);
}

// Raw HTML in a model's answer is shown as text, never interpreted; DOMPurify below is the second line of defence.
const marked = new Marked({
  gfm: true,
  renderer: {
    html: ({ text }) => escapeHtml(text),
    code({ text, lang }) {
      const language = languageOf(text, (lang ?? '').trim().split(/\s+/, 1)[0].toLowerCase());
      const className = `hljs${language ? ` language-${escapeHtml(language)}` : ''}`;
      return `<pre><code class="${className}">${highlighted(text, language)}</code></pre>\n`;
    },
  },
});

const purifier = DOMPurify(window);
purifier.addHook('afterSanitizeAttributes', (node) => {
  if (node.tagName === 'A' && node.hasAttribute('href')) {
    node.setAttribute('target', '_blank');
    node.setAttribute('rel', 'noopener noreferrer nofollow');
  }
  // Only images carried inside the answer itself may show: nothing the model writes loads remote content.
  if (node.tagName === 'IMG' && !/^data:image\/(png|jpe?g|gif|webp);/i.test(node.getAttribute('src') ?? '')) {
    node.removeAttribute('src');
  }
});
const sanitizeOptions = {
  USE_PROFILES: { html: true },
  FORBID_TAGS: ['style', 'form', 'input', 'button', 'textarea', 'select', 'iframe', 'object', 'embed', 'video', 'audio', 'source', 'picture', 'link', 'meta', 'base'],
  FORBID_ATTR: ['style', 'srcset', 'action', 'formaction', 'background', 'poster', 'ping'],
  RETURN_DOM_FRAGMENT: true,
};

/** Markdown → a sanitised DocumentFragment, code highlighted, each code block with a copy button. */
export function renderMarkdown(text) {
  const fragment = purifier.sanitize(marked.parse(text), sanitizeOptions);
  for (const image of fragment.querySelectorAll('img:not([src])')) {
    image.replaceWith(element('span', { className: 'blocked-image', title: 'Remote images are not loaded' }, `[image: ${image.getAttribute('alt') || 'not loaded'}]`));
  }
  for (const pre of fragment.querySelectorAll('pre')) {
    const language = /\blanguage-(\S+)/.exec(pre.querySelector('code')?.className ?? '')?.[1] ?? '';
    // A scrolling block takes the focus, so a keyboard can scroll it (WCAG 2.1.1).
    pre.tabIndex = 0;
    const block = element('div', { className: 'code-block' });
    pre.replaceWith(block);
    block.append(element('div', { className: 'code-toolbar' }, element('span', { className: 'code-language' }, language), element('button', { type: 'button', className: 'copy-code', 'aria-label': 'Copy code' }, 'Copy')), pre);
  }
  return fragment;
}

const blockTags = new Set(['P', 'DIV', 'PRE', 'BLOCKQUOTE', 'H1', 'H2', 'H3', 'H4', 'H5', 'H6', 'LI', 'TR', 'TABLE', 'UL', 'OL', 'HR']);

/** Markdown → the text a person reads, without its marks (`**Done.**` → `Done.`): for places that show no HTML. */
export function markdownToPlainText(text) {
  const lines = [];
  let line = '';
  const endLine = () => {
    if (line.trim() !== '') lines.push(line.trim());
    line = '';
  };
  const walk = (node) => {
    for (const child of node.childNodes) {
      if (child.nodeType === Node.TEXT_NODE) line += child.textContent;
      else if (child.nodeName === 'BR') line += '\n';
      else if (child.nodeName === 'IMG') line += child.getAttribute('alt') ?? '';
      else if (!blockTags.has(child.nodeName)) walk(child);
      else {
        endLine();
        if (child.nodeName === 'LI') line = '• ';
        walk(child);
        endLine();
      }
    }
  };
  walk(purifier.sanitize(marked.parse(text), sanitizeOptions));
  endLine();
  return lines.join('\n');
}

const fenceLine = /^ {0,3}(`{3,}|~{3,})/;

/**
 * The end of the last blank line after `from` that lies outside any fenced code block; the Markdown
 * before it will not change as more text streams in. `from` must itself be such a boundary.
 */
function stableBoundary(text, from) {
  let boundary = from;
  let fence;
  let lineStart = from;
  while (lineStart < text.length) {
    const newline = text.indexOf('\n', lineStart);
    if (newline === -1) break;
    const line = text.slice(lineStart, newline);
    const marker = fenceLine.exec(line)?.[1];
    if (fence === undefined && marker) fence = marker;
    else if (fence !== undefined && marker && marker[0] === fence[0] && marker.length >= fence.length && line.trim() === marker) fence = undefined;
    else if (fence === undefined && line.trim() === '' && lineStart > from) boundary = newline + 1;
    lineStart = newline + 1;
  }
  return boundary;
}

/**
 * Renders a growing Markdown text. Finished blocks are rendered once and kept; only the block still
 * being written is rendered again on each `render()`. `finish()` renders the whole text once, so
 * constructs that span blank lines come out exactly as Markdown has them.
 */
export class MarkdownStream {
  #text = '';
  #committed = 0;
  #stable = element('div', { className: 'markdown-stable' });
  #tail = element('div', { className: 'markdown-tail' });

  constructor(container) {
    this.container = container;
    container.replaceChildren(this.#stable, this.#tail);
  }

  get text() {
    return this.#text;
  }

  append(delta) {
    this.#text += delta;
  }

  render() {
    const boundary = stableBoundary(this.#text, this.#committed);
    if (boundary > this.#committed) {
      this.#stable.append(renderMarkdown(this.#text.slice(this.#committed, boundary)));
      this.#committed = boundary;
    }
    this.#tail.replaceChildren(renderMarkdown(this.#text.slice(this.#committed)));
  }

  finish(finalText = this.#text) {
    this.#text = finalText;
    this.container.replaceChildren(renderMarkdown(finalText));
  }
}
