/** The headings above the current place of a document, outermost first, as heading levels nest. */
export class HeadingTrail {
  private readonly open: { level: number; text: string }[] = [];

  /** A heading of `level` (1 = outermost) closes those at its level and below; returns the path ending with it. */
  enter(level: number, text: string): string[] {
    while (this.open.length > 0 && this.open.at(-1)!.level >= level) this.open.pop();
    this.open.push({ level, text });
    return this.path;
  }

  get path(): string[] {
    return this.open.map((heading) => heading.text);
  }
}

/** Runs of white space as one space, trimmed. */
export function collapseSpace(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}
