/**
 * Telegram's HTML parse mode as the Bot API documents it (https://core.telegram.org/bots/api#html-style),
 * for the Bot API stand-in and for tests: the supported tags, the four named entities and numeric
 * ones, pre and code holding no other entity, blockquotes not nested. Anything else is the 400
 * "can't parse entities" Telegram answers.
 */

export interface MessageEntity {
  type: string;
  offset: number;
  length: number;
  url?: string;
  language?: string;
}

export type ParsedHtml = { ok: true; text: string; entities: MessageEntity[] } | { ok: false; description: string };

const entityTypes: Record<string, string> = {
  b: 'bold',
  strong: 'bold',
  i: 'italic',
  em: 'italic',
  u: 'underline',
  ins: 'underline',
  s: 'strikethrough',
  strike: 'strikethrough',
  del: 'strikethrough',
  'tg-spoiler': 'spoiler',
  a: 'text_link',
  code: 'code',
  pre: 'pre',
  blockquote: 'blockquote',
};

const namedEntities: Record<string, string> = { lt: '<', gt: '>', amp: '&', quot: '"' };

interface OpenTag {
  name: string;
  type: string;
  offset: number;
  url?: string;
  language?: string;
}

function failure(reason: string): ParsedHtml {
  return { ok: false, description: `Bad Request: can't parse entities: ${reason}` };
}

function attributeOf(attributes: string, name: string): string | undefined {
  const match = new RegExp(`\\b${name}\\s*=\\s*(?:"([^"]*)"|'([^']*)'|([^\\s>]+))`).exec(attributes);
  if (!match) return undefined;
  return decodeEntities(match[1] ?? match[2] ?? match[3] ?? '');
}

function decodeEntities(text: string): string {
  return text.replace(/&(#\d+|#x[\da-fA-F]+|[a-zA-Z]+);/g, (whole, body: string) => {
    if (body.startsWith('#x')) return String.fromCodePoint(parseInt(body.slice(2), 16));
    if (body.startsWith('#')) return String.fromCodePoint(parseInt(body.slice(1), 10));
    return namedEntities[body] ?? whole;
  });
}

/** Parses `html` into its text (UTF-16, as Telegram counts) and entities, or says why Telegram would refuse it. */
export function parseTelegramHtml(html: string): ParsedHtml {
  let text = '';
  const entities: MessageEntity[] = [];
  const stack: OpenTag[] = [];
  let position = 0;
  while (position < html.length) {
    const character = html[position]!;
    if (character === '<') {
      const tag = /^<(\/?)([a-zA-Z][\w-]*)((?:\s[^<>]*)?)>/.exec(html.slice(position));
      if (!tag) return failure(`Unexpected end of name token at byte offset ${position}`);
      const [whole, slash, rawName, attributes] = tag;
      const name = rawName!.toLowerCase();
      if (slash) {
        const open = stack.pop();
        if (!open) return failure(`Unexpected end tag at byte offset ${position}`);
        if (open.name !== name) return failure(`Can't find end tag corresponding to start tag "${open.name}"`);
        const length = text.length - open.offset;
        if (open.type === 'code' && stack.at(-1)?.type === 'pre') stack.at(-1)!.language = open.language;
        else if (length > 0) {
          const entity: MessageEntity = { type: open.type, offset: open.offset, length };
          if (open.url !== undefined) entity.url = open.url;
          if (open.language !== undefined) entity.language = open.language;
          entities.push(entity);
        }
      } else {
        const spoilerSpan = name === 'span' && attributeOf(attributes ?? '', 'class') === 'tg-spoiler';
        const type = spoilerSpan ? 'spoiler' : entityTypes[name];
        if (type === undefined) return failure(`Unsupported start tag "${name}" at byte offset ${position}`);
        const inside = stack.at(-1);
        if (inside && (inside.type === 'code' || (inside.type === 'pre' && type !== 'code'))) {
          return failure(`Entities can't be nested in ${inside.type} at byte offset ${position}`);
        }
        if (type === 'blockquote' && stack.some((open) => open.type === 'blockquote')) {
          return failure(`Blockquote entities can't be nested at byte offset ${position}`);
        }
        const open: OpenTag = { name, type, offset: text.length };
        if (type === 'text_link') {
          const href = attributeOf(attributes ?? '', 'href');
          if (!href) return failure(`Tag "a" must have attribute "href" at byte offset ${position}`);
          open.url = href;
        }
        if (type === 'code') {
          const language = /^language-(.+)$/.exec(attributeOf(attributes ?? '', 'class') ?? '')?.[1];
          if (language !== undefined) open.language = language;
        }
        stack.push(open);
      }
      position += whole!.length;
      continue;
    }
    if (character === '&') {
      const entity = /^&(#\d+|#x[\da-fA-F]+|[a-zA-Z]+);/.exec(html.slice(position));
      if (!entity) return failure(`Character entity expected at byte offset ${position}`);
      const decoded = decodeEntities(entity[0]);
      if (decoded === entity[0]) return failure(`Unsupported HTML entity "${entity[0]}" at byte offset ${position}`);
      text += decoded;
      position += entity[0].length;
      continue;
    }
    if (character === '>') return failure(`Unexpected character ">" at byte offset ${position}`);
    text += character;
    position += 1;
  }
  const unclosed = stack.at(-1);
  if (unclosed) return failure(`Can't find end tag corresponding to start tag "${unclosed.name}"`);
  return { ok: true, text, entities: entities.sort((first, second) => first.offset - second.offset) };
}
