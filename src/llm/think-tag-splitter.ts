// Some OpenAI-compatible servers (llama.cpp, LM Studio, vLLM without a reasoning parser)
// leave a model's reasoning inline as `<think>…</think>` in the content. This splits it
// out while streaming, when a tag may be cut across chunks (`<thi` + `nk>`).

export interface SplitPiece {
  kind: 'thinking' | 'text';
  text: string;
}

const openTag = '<think>';
const closeTag = '</think>';

export class ThinkTagSplitter {
  private insideThinking = false;
  private pending = '';
  /** After `</think>` models usually write blank lines before the answer; drop them. */
  private trimLeadingText = false;

  push(chunk: string): SplitPiece[] {
    this.pending += chunk;
    const pieces: SplitPiece[] = [];
    while (true) {
      const tag = this.insideThinking ? closeTag : openTag;
      const tagAt = this.pending.indexOf(tag);
      if (tagAt === -1) break;
      this.emit(pieces, this.pending.slice(0, tagAt));
      this.pending = this.pending.slice(tagAt + tag.length);
      this.insideThinking = !this.insideThinking;
      this.trimLeadingText = !this.insideThinking;
    }
    const keep = partialTagLength(this.pending, this.insideThinking ? closeTag : openTag);
    this.emit(pieces, this.pending.slice(0, this.pending.length - keep));
    this.pending = this.pending.slice(this.pending.length - keep);
    return pieces;
  }

  /** The text held back because it might have been the start of a tag. */
  flush(): SplitPiece[] {
    const pieces: SplitPiece[] = [];
    this.emit(pieces, this.pending);
    this.pending = '';
    return pieces;
  }

  private emit(pieces: SplitPiece[], rawText: string): void {
    const kind = this.insideThinking ? 'thinking' : 'text';
    let text = rawText;
    if (kind === 'text' && this.trimLeadingText) {
      text = text.trimStart();
      if (text !== '') this.trimLeadingText = false;
    }
    if (text === '') return;
    const last = pieces.at(-1);
    if (last?.kind === kind) last.text += text;
    else pieces.push({ kind, text });
  }
}

/** How many characters at the end of `text` could begin `tag`. */
function partialTagLength(text: string, tag: string): number {
  for (let length = Math.min(text.length, tag.length - 1); length > 0; length -= 1) {
    if (tag.startsWith(text.slice(text.length - length))) return length;
  }
  return 0;
}
