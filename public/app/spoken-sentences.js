/** A clause this long is spoken without waiting for its sentence to end, cut at a comma or a space. */
const longClause = 180;
const fenceLine = /^\s*(```|~~~)/;
/** A line's start that may still become a code fence once more of it arrives. */
const fenceStart = /^\s*[`~]{0,2}$/;
/** Sentence-ending punctuation (with closing quotes or brackets) followed by a space. */
const sentenceEnd = /[.!?…]+["'”’)\]]*(?=\s)/g;
/** A full stop that does not end a sentence: after an initial or a common abbreviation, or a list's number at a line's start. */
const abbreviation = /(\b(e\.g|i\.e|vs|mr|mrs|ms|dr|st|approx)|(^|\s)[a-z])\.$/i;
const listNumber = /^\s*\d+[.)]$/;

/**
 * The words of a piece of Markdown as they should be spoken: links by their text, images by
 * their description, no markers of headings, lists, quotes, emphasis or tables, no addresses.
 */
export function speakable(markdown) {
  return markdown
    .replace(/!\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/\[([^\]]+)\]\([^)]*\)/g, '$1')
    .replace(/<[^>]*>/g, ' ')
    .replace(/\bhttps?:\/\/\S+/g, ' ')
    .replace(/^\s*(#{1,6}\s+|>\s*|[-*+]\s+(\[[ xX]\]\s+)?|\d+[.)]\s+)/, '')
    .replace(/[*_~`|#]+/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
}

/**
 * Cuts an answer streaming in as Markdown deltas into sentences to speak, as soon as each is
 * complete: at sentence-ending punctuation followed by a space, at the end of a line (a heading,
 * a list item), or in a long clause. Code blocks are not spoken.
 */
export class SpokenSentences {
  #pending = '';
  #atLineStart = true;
  #inFence = false;

  /** Adds a delta; returns the sentences it completed. */
  push(delta) {
    this.#pending += delta;
    return this.#take(false);
  }

  /** The answer ended: what is left is the last sentence. */
  flush() {
    const sentences = this.#take(true);
    this.reset();
    return sentences;
  }

  reset() {
    this.#pending = '';
    this.#atLineStart = true;
    this.#inFence = false;
  }

  #take(final) {
    const sentences = [];
    const emit = (text) => {
      const words = speakable(text);
      if (/[\p{L}\p{N}]/u.test(words)) sentences.push(words);
    };
    while (this.#pending !== '') {
      const newline = this.#pending.indexOf('\n');
      const line = newline === -1 ? this.#pending : this.#pending.slice(0, newline);
      if (this.#atLineStart) {
        if (newline === -1 && !final && fenceStart.test(line)) break;
        const fence = fenceLine.test(line);
        if (fence || this.#inFence) {
          if (newline === -1 && !final) break;
          if (fence) this.#inFence = !this.#inFence;
          this.#pending = newline === -1 ? '' : this.#pending.slice(newline + 1);
          continue;
        }
      }
      const end = this.#sentenceEnd(line);
      if (end !== -1) {
        emit(line.slice(0, end));
        this.#pending = this.#pending.slice(end);
        this.#atLineStart = false;
      } else if (newline !== -1) {
        emit(line);
        this.#pending = this.#pending.slice(newline + 1);
        this.#atLineStart = true;
      } else if (line.length >= longClause) {
        const cut = clauseCut(line);
        emit(line.slice(0, cut));
        this.#pending = this.#pending.slice(cut);
        this.#atLineStart = false;
      } else {
        if (final) emit(line);
        if (final) this.#pending = '';
        break;
      }
    }
    return sentences;
  }

  /** Where the line's first sentence ends (just after its punctuation), or -1. */
  #sentenceEnd(line) {
    for (const match of line.matchAll(sentenceEnd)) {
      const end = match.index + match[0].length;
      const before = line.slice(0, end);
      if (abbreviation.test(before) || (this.#atLineStart && listNumber.test(before))) continue;
      return end;
    }
    return -1;
  }
}

/** Where to cut a long clause: after its last comma, semicolon or colon, else at its last space. */
function clauseCut(line) {
  const head = line.slice(0, longClause);
  const mark = Math.max(head.lastIndexOf(', '), head.lastIndexOf('; '), head.lastIndexOf(': '));
  if (mark > longClause / 3) return mark + 1;
  const space = head.lastIndexOf(' ');
  return space > 0 ? space : longClause;
}
