// Whether a call could carry data out of a run that has read outside content: the taint rules of
// docs/security.md (Untrusted content). Pure functions: the agent loop gathers what the run has
// read, the approval gate puts the call to the person.

import { normaliseUrl } from './normalise-subject.ts';

/** What one call would send beyond the run, as its tool declares it (src/tools/tool.ts). */
export type Outflow =
  /** A request to somewhere: each part (URL, query, body, header value) must already appear in what the run may quote. */
  | { request: readonly string[] }
  /** Something that outlives the run or acts elsewhere (a schedule, a memory, a message on a bus): a tainted run asks. */
  | { effect: string };

/** What a run has read from outside, and the texts its requests may quote. */
export interface OutsideReading {
  /** Outside sources read (a host, `MCP server files`…), first read first; none: the run is not tainted. */
  sources: readonly string[];
  /** The person's own messages and the outside content read: a request may repeat what they hold. */
  texts: readonly string[];
}

export const nothingRead: OutsideReading = { sources: [], texts: [] };

/** The reading of a run that also has what its parent had read (a sub-agent). */
export function combineReadings(first: OutsideReading, second: OutsideReading): OutsideReading {
  return { sources: [...new Set([...first.sources, ...second.sources])], texts: [...first.texts, ...second.texts] };
}

/**
 * Why this call must be put to the person: undefined when the run has read nothing from outside,
 * when the profile lets the tool past (`untrusted: {allow}`), or when every part of its request
 * appears in what the run may quote (so following a link a page showed needs no question).
 */
export function outflowReason(reading: OutsideReading, call: { tool: string; outflow: Outflow | undefined }, allowed: readonly string[]): string | undefined {
  if (reading.sources.length === 0 || call.outflow === undefined || allowed.includes(call.tool)) return undefined;
  const after = `after reading ${describeSources(reading.sources)}`;
  if ('effect' in call.outflow) return `${after}, ${call.outflow.effect} could act on instructions hidden in it or carry data out`;
  const quotable = new QuotableTexts(reading.texts);
  const unseen = call.outflow.request.filter((part) => part !== '' && !quotable.contains(part));
  if (unseen.length === 0) return undefined;
  return `${after}, this request could carry data out: ${clip(unseen[0]!, 120)} appeared neither in your messages nor in what was read`;
}

function describeSources(sources: readonly string[]): string {
  if (sources.length <= 3) return sources.length === 1 ? sources[0]! : `${sources.slice(0, -1).join(', ')} and ${sources.at(-1)}`;
  return `${sources.slice(0, 2).join(', ')} and ${sources.length - 2} other sources`;
}

function clip(text: string, length: number): string {
  const single = text.replace(/\s+/g, ' ');
  return single.length > length ? `"${single.slice(0, length - 1)}…"` : `"${single}"`;
}

/** Runs of characters a URL in running text ends before; trailing punctuation is dropped after. */
const urlInText = /\bhttps?:\/\/[^\s<>"'`\\^{}|]+/gi;
const trailingPunctuation = /[.,;:!?)\]*_]+$/;

/**
 * The texts a request may quote, compared as a server would read them: a URL by its normal form
 * (scheme and host in lower case, unreserved escapes decoded, default port and fragment dropped), so
 * `HTTPS://Example.com/%7Euser` is the link `https://example.com/~user` a page showed; other text
 * with its escapes decoded, Unicode compatibility forms folded and runs of whitespace made one space.
 */
export class QuotableTexts {
  private urls: Set<string> | undefined;
  private plain: string[] | undefined;

  constructor(private readonly texts: readonly string[]) {}

  contains(part: string): boolean {
    const url = requestUrl(part);
    if (url !== undefined) {
      this.urls ??= new Set(this.texts.flatMap(urlsIn));
      if (this.urls.has(url)) return true;
    }
    const wanted = normaliseText(part);
    if (wanted === '') return true;
    this.plain ??= this.texts.map(normaliseText);
    return this.plain.some((text) => text.includes(wanted));
  }
}

function urlsIn(text: string): string[] {
  return [...text.matchAll(urlInText)].flatMap(([match]) => {
    const url = requestUrl(match.replace(trailingPunctuation, ''));
    return url === undefined ? [] : [url];
  });
}

/** The URL as a request sends it, in its normal form; undefined for anything but an absolute http(s) URL. */
function requestUrl(text: string): string | undefined {
  if (!/^\s*https?:\/\//i.test(text)) return undefined;
  const normal = normaliseUrl(text.trim());
  return normal?.replace(/#.*$/s, '');
}

function normaliseText(text: string): string {
  return decodeEscapes(text).normalize('NFKC').replace(/\s+/g, ' ').trim();
}

function decodeEscapes(text: string): string {
  if (!text.includes('%')) return text;
  try {
    return decodeURIComponent(text.replace(/\+/g, ' '));
  } catch {
    return text;
  }
}
