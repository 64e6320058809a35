import { Lexer, type Token, type Tokens } from 'marked';

/** The most of an answer spoken in a voice note: about a minute of speech; the rest is only in the text. */
export const spokenCharacterLimit = 1_000;

const codeNote = 'The code is in the text.';
const tableNote = 'The table is in the text.';
const restNote = 'The rest is in the text.';

/**
 * What a voice note says of an answer written in Markdown: its words without the marks, each
 * list item and heading a sentence, code blocks and tables named rather than read out. Past
 * `limit` characters it stops at the last sentence end before the cut (a word end when a
 * sentence runs past it) and says the rest is in the text.
 */
export function spokenText(markdown: string, limit = spokenCharacterLimit): string {
  const tokens = new Lexer({ gfm: true }).lex(markdown);
  const whole = blocks(tokens).replace(/\s+/g, ' ').trim();
  if (whole.length <= limit) return whole;
  const room = limit - restNote.length - 1;
  const head = whole.slice(0, room + 1);
  const sentenceEnd = Math.max(...['. ', '! ', '? '].map((end) => head.lastIndexOf(end)));
  const cut = sentenceEnd > room / 2 ? sentenceEnd + 1 : Math.max(head.lastIndexOf(' '), 0);
  return `${whole.slice(0, cut).trim()} ${restNote}`.trim();
}

function blocks(tokens: Token[]): string {
  return tokens.map(block).filter((text) => text !== '').join(' ');
}

function block(token: Token): string {
  switch (token.type) {
    case 'paragraph':
    case 'heading':
      return sentence(inline((token as Tokens.Paragraph | Tokens.Heading).tokens));
    case 'text': {
      const text = token as Tokens.Text;
      return sentence(text.tokens ? inline(text.tokens) : text.text);
    }
    case 'list':
      return (token as Tokens.List).items.map((item) => blocks(item.tokens)).join(' ');
    case 'blockquote':
      return blocks((token as Tokens.Blockquote).tokens);
    case 'code':
      return codeNote;
    case 'table':
      return tableNote;
    default:
      // space, hr, html, def, checkbox: nothing to say.
      return '';
  }
}

function inline(tokens: Token[] | undefined): string {
  if (!tokens) return '';
  return tokens
    .map((token) => {
      switch (token.type) {
        case 'br':
          return ' ';
        case 'html':
          return '';
        case 'image':
          return (token as Tokens.Image).text;
        case 'codespan':
        case 'escape':
          return (token as Tokens.Codespan).text;
        default:
          return 'tokens' in token && Array.isArray(token.tokens) ? inline(token.tokens) : 'text' in token && typeof token.text === 'string' ? token.text : '';
      }
    })
    .join('');
}

/** A line as a sentence: a voice pauses at its end only when it ends like one. */
function sentence(text: string): string {
  const trimmed = text.trim();
  if (trimmed === '') return '';
  return /[.!?\u2026:;]$/.test(trimmed) ? trimmed : `${trimmed}.`;
}
