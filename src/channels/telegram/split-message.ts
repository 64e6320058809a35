/** Telegram's limit on one message's text (https://core.telegram.org/bots/api#sendmessage). */
export const telegramMessageLimit = 4096;

interface Unit {
  text: string;
  kind: 'open' | 'close' | 'character';
  /** For tags: the tag's name. */
  name?: string;
}

const unitPattern = /<\/?[a-zA-Z][\w-]*(?:\s[^>]*)?>|&(?:#\d+|#x[\da-fA-F]+|[a-zA-Z]+);|[\s\S]/gu;

function unitsOf(html: string): Unit[] {
  const units: Unit[] = [];
  for (const [text] of html.matchAll(unitPattern)) {
    if (text.length > 1 && text.startsWith('<')) {
      const closing = text.startsWith('</');
      const name = /^<\/?([a-zA-Z][\w-]*)/.exec(text)![1]!.toLowerCase();
      units.push({ text, kind: closing ? 'close' : 'open', name });
    } else {
      units.push({ text, kind: 'character' });
    }
  }
  return units;
}

function closingTags(stack: Unit[]): string {
  return stack.map((tag) => `</${tag.name}>`).reverse().join('');
}

/**
 * Splits Telegram HTML (as `renderTelegramHtml` makes it) into messages of at most `limit`
 * characters each, tags included, so that each one is well-formed on its own: tags open at a
 * split are closed at the end of one piece and opened again, with their attributes, at the
 * start of the next; a tag or an entity is never cut. It splits after a paragraph break when
 * one lies in the second half of the room, else after a line break, else after a space, else
 * wherever the room ends. The pieces' texts, put together, are the whole text.
 */
export function splitTelegramHtml(html: string, limit = telegramMessageLimit): string[] {
  if (html.length <= limit) return [html];
  const units = unitsOf(html);
  const pieces: string[] = [];
  let stack: Unit[] = [];
  let start = 0;
  while (start < units.length) {
    const opening = stack.map((tag) => tag.text).join('');
    // Walk forward as far as the room allows, remembering the stack and the best breaks.
    const walk = [...stack];
    let length = opening.length;
    let end = start;
    let closingLength = closingTags(walk).length;
    const breaks = { paragraph: -1, line: -1, space: -1 };
    const stacksAt = new Map<number, Unit[]>();
    while (end < units.length) {
      const unit = units[end]!;
      let nextClosingLength = closingLength;
      if (unit.kind === 'open') nextClosingLength += unit.name!.length + 3;
      if (unit.kind === 'close') nextClosingLength -= unit.name!.length + 3;
      if (length + unit.text.length + nextClosingLength > limit && end > start) break;
      length += unit.text.length;
      closingLength = nextClosingLength;
      if (unit.kind === 'open') walk.push(unit);
      if (unit.kind === 'close') walk.pop();
      end += 1;
      if (unit.kind === 'character' && end < units.length) {
        const previous = units[end - 2];
        if (unit.text === '\n' && previous?.text === '\n') breaks.paragraph = end;
        else if (unit.text === '\n') breaks.line = end;
        else if (unit.text === ' ') breaks.space = end;
        if (breaks.paragraph === end || breaks.line === end || breaks.space === end) stacksAt.set(end, [...walk]);
      }
    }
    let cut = end;
    if (end < units.length) {
      const halfway = start + (end - start) / 2;
      const preferred = [breaks.paragraph, breaks.line, breaks.space].find((position) => position > halfway);
      if (preferred !== undefined) cut = preferred;
    }
    let cutStack = cut === end ? walk : stacksAt.get(cut)!;
    // Closing tags right after the cut cost nothing (they are closed anyway): take them along.
    while (cut < units.length && units[cut]!.kind === 'close' && cutStack.length > 0) {
      cutStack = cutStack.slice(0, -1);
      cut += 1;
    }
    const body = units.slice(start, cut).map((unit) => unit.text).join('');
    pieces.push(opening + body + closingTags(cutStack));
    stack = cutStack;
    start = cut;
  }
  return pieces;
}
