/** Keeps the head and the tail of long output, where commands print what matters, and says how much was cut. */
export function keepHeadAndTail(text: string, maxCharacters: number): string {
  if (text.length <= maxCharacters) return text;
  const half = Math.floor(maxCharacters / 2);
  const omitted = text.length - 2 * half;
  return `${text.slice(0, half)}\n… [${omitted} characters omitted] …\n${text.slice(text.length - half)}`;
}

/** Keeps the beginning of long text and adds a note saying it was cut and how to see more. */
export function keepHead(text: string, maxCharacters: number, hint = ''): string {
  if (text.length <= maxCharacters) return text;
  return `${text.slice(0, maxCharacters)}\n… [truncated: showing ${maxCharacters} of ${text.length} characters${hint ? `; ${hint}` : ''}]`;
}
