import { Lexer, type Token, type Tokens } from 'marked';

/**
 * Renders the model's Markdown to the HTML subset Telegram's `parse_mode: 'HTML'` accepts
 * (https://core.telegram.org/bots/api#html-style): b, i, s, code, pre, a, blockquote. Everything
 * else is text: raw HTML from the model arrives escaped, lists, headings, tables and rules
 * become plain lines. The result is well-formed for Telegram's parser at every prefix of a
 * streamed answer, since each render starts from the whole Markdown again.
 */
export function renderTelegramHtml(markdown: string): string {
  const tokens = new Lexer({ gfm: true }).lex(markdown);
  return renderBlocks(tokens).trim();
}

/** The three characters Telegram's HTML parser needs escaped in text (`"` too, inside attributes). */
export function escapeHtml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

/** Only links Telegram opens without surprise: web pages and `tg:` links. */
export function isSafeHref(href: string): boolean {
  return /^(https?:\/\/|tg:)/i.test(href.trim());
}

function renderBlocks(tokens: Token[], quoted = false): string {
  const blocks: string[] = [];
  for (const token of tokens) {
    const rendered = renderBlock(token, quoted);
    if (rendered !== '') blocks.push(rendered);
  }
  return blocks.join('\n\n');
}

/** `quoted`: inside a blockquote already, which Telegram does not let nest. */
function renderBlock(token: Token, quoted = false): string {
  switch (token.type) {
    case 'space':
    case 'def':
      return '';
    case 'paragraph':
      return renderInline((token as Tokens.Paragraph).tokens);
    case 'heading':
      return `<b>${renderInline((token as Tokens.Heading).tokens)}</b>`;
    case 'code': {
      const code = token as Tokens.Code;
      const language = code.lang?.trim().split(/\s+/)[0] ?? '';
      const opening = /^[\w+#.-]+$/.test(language) ? `<pre><code class="language-${escapeHtml(language)}">` : '<pre><code>';
      return `${opening}${escapeHtml(code.text)}</code></pre>`;
    }
    case 'blockquote': {
      const inner = renderBlocks((token as Tokens.Blockquote).tokens, true);
      return quoted ? inner : `<blockquote>${inner}</blockquote>`;
    }
    case 'list':
      return renderList(token as Tokens.List, 0, quoted);
    case 'table':
      return renderTable(token as Tokens.Table);
    case 'hr':
      return '———';
    case 'html':
      return escapeHtml((token as Tokens.HTML).text.trim());
    case 'text': {
      const text = token as Tokens.Text;
      return text.tokens ? renderInline(text.tokens) : escapeHtml(text.text);
    }
    default:
      return 'raw' in token && typeof token.raw === 'string' ? escapeHtml(token.raw.trim()) : '';
  }
}

function renderList(list: Tokens.List, depth: number, quoted: boolean): string {
  const indent = '    '.repeat(depth);
  const start = typeof list.start === 'number' ? list.start : 1;
  return list.items
    .map((item, index) => {
      const marker = item.task ? (item.checked ? '☑' : '☐') : list.ordered ? `${start + index}.` : '•';
      const lines: string[] = [];
      let first = true;
      for (const child of item.tokens) {
        if (child.type === 'list') {
          lines.push(renderList(child as Tokens.List, depth + 1, quoted));
          continue;
        }
        if (child.type === 'checkbox') continue;
        const rendered = renderBlock(child, quoted);
        if (rendered === '') continue;
        lines.push(first ? `${indent}${marker} ${rendered}` : `${indent}  ${rendered}`);
        first = false;
      }
      if (first) lines.unshift(`${indent}${marker}`);
      return lines.join('\n');
    })
    .join('\n');
}

function renderTable(table: Tokens.Table): string {
  const row = (cells: Tokens.TableCell[]) => cells.map((cell) => renderInline(cell.tokens)).join(' | ');
  return [`<b>${row(table.header)}</b>`, ...table.rows.map(row)].join('\n');
}

function renderInline(tokens: Token[] | undefined): string {
  if (!tokens) return '';
  return tokens.map(renderInlineToken).join('');
}

function renderInlineToken(token: Token): string {
  switch (token.type) {
    case 'text': {
      const text = token as Tokens.Text;
      return text.tokens ? renderInline(text.tokens) : escapeHtml(text.text);
    }
    case 'escape':
      return escapeHtml((token as Tokens.Escape).text);
    case 'strong':
      return `<b>${renderInline((token as Tokens.Strong).tokens)}</b>`;
    case 'em':
      return `<i>${renderInline((token as Tokens.Em).tokens)}</i>`;
    case 'del':
      return `<s>${renderInline((token as Tokens.Del).tokens)}</s>`;
    case 'codespan':
      return `<code>${escapeHtml((token as Tokens.Codespan).text)}</code>`;
    case 'br':
      return '\n';
    case 'link': {
      const link = token as Tokens.Link;
      const label = renderInline(link.tokens);
      return isSafeHref(link.href) ? `<a href="${escapeHtml(link.href.trim())}">${label}</a>` : label;
    }
    case 'image': {
      const image = token as Tokens.Image;
      const label = escapeHtml(image.text || image.href);
      return isSafeHref(image.href) ? `<a href="${escapeHtml(image.href.trim())}">${label}</a>` : label;
    }
    case 'html':
      return escapeHtml((token as Tokens.HTML).text);
    default:
      return 'raw' in token && typeof token.raw === 'string' ? escapeHtml(token.raw) : '';
  }
}
