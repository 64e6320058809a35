// A call's subject as approval rules see it (docs/agent.md, "Approvals"): every spelling of the same
// request reads the same, so a rule cannot be dodged by writing a URL another way.

/**
 * How one part of a subject is read. The parts are joined by single spaces; a tool's subject
 * is split at its first spaces into as many parts as it declares, the last taking the rest.
 * - `word`: one token (a method, an action); any whitespace in it is hidden.
 * - `text`: free text such as a path; spaces are its own, any other whitespace is hidden.
 * - `command`: a command line; spaces and tabs separate its words.
 * - `url`: an absolute URL, parsed and written out canonically (spaces escaped); anything else is read as `text`.
 */
export type SubjectPartKind = 'word' | 'text' | 'command' | 'url';

export interface NormalisedSubject {
  subject: string;
  /** The subject held whitespace or control characters besides its separators: no allow glob may match it. */
  hiddenCharacters: boolean;
}

const hiddenInWord = /[\s\p{Cc}\p{Cf}\p{Z}]/u;
const hiddenInText = /(?! )[\s\p{Cc}\p{Cf}\p{Z}]/u;
const hiddenInCommand = /(?![ \t])[\s\p{Cc}\p{Cf}\p{Z}]/u;
const absoluteUrl = /^[\s\0-\x1f]*[A-Za-z][A-Za-z0-9+.-]*:/;
const percentEncoded = /%([0-9A-Fa-f]{2})/g;
const unreserved = /^[A-Za-z0-9\-._~]$/;
/** Home Assistant's REST service call, wherever the API is mounted: `…/api/services/<domain>/<service>`. */
const homeAssistantService = /^(.*\/)?api\/services\/([^/]+)\/([^/]+?)\/?$/is;

export function normaliseSubject(subject: string, parts: readonly SubjectPartKind[]): NormalisedSubject {
  const pieces = splitParts(subject, parts.length);
  let hiddenCharacters = false;
  const normalised = pieces.map((piece, index) => {
    const part = normalisePart(piece, parts[index] ?? 'text');
    hiddenCharacters ||= part.hiddenCharacters;
    return part.subject;
  });
  return { subject: normalised.join(' '), hiddenCharacters };
}

function splitParts(subject: string, count: number): string[] {
  const pieces: string[] = [];
  let rest = subject;
  while (pieces.length < count - 1) {
    const space = rest.indexOf(' ');
    if (space < 0) break;
    pieces.push(rest.slice(0, space));
    rest = rest.slice(space + 1);
  }
  pieces.push(rest);
  return pieces;
}

function normalisePart(text: string, kind: SubjectPartKind): NormalisedSubject {
  switch (kind) {
    case 'word':
      return { subject: text, hiddenCharacters: hiddenInWord.test(text) };
    case 'text':
      return { subject: text, hiddenCharacters: hiddenInText.test(text) };
    case 'command':
      return { subject: text, hiddenCharacters: hiddenInCommand.test(text) };
    case 'url': {
      const url = absoluteUrl.test(text) ? normaliseUrl(text) : undefined;
      // The parser drops tabs and newlines and trims the ends (spaces it escapes); the request goes out without them, but they were hiding something.
      return { subject: url ?? text, hiddenCharacters: hiddenInText.test(text) };
    }
  }
}

/**
 * The URL as the WHATWG parser reads it (what fetch sends): scheme and host lower-cased,
 * dot segments (`.`, `%2e%2e`) resolved, backslashes read as slashes in http(s), default
 * ports dropped; then a host's trailing dots removed, percent-encoded unreserved characters
 * decoded (`%6c%6fck` → `lock`, as servers read them) and the rest upper-cased, and a Home
 * Assistant service path reduced to lower-case `/api/services/<domain>/<service>` however
 * it was encoded. Undefined when it does not parse.
 */
export function normaliseUrl(text: string): string | undefined {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return undefined;
  }
  if (url.hostname.endsWith('.') && url.hostname.replace(/\.+$/, '') !== '') url.hostname = url.hostname.replace(/\.+$/, '');
  if (url.host !== '' && !isSpecial(url.protocol)) url.host = url.host.toLowerCase();
  const tail = url.pathname + url.search + url.hash;
  const href = url.href;
  if (!href.endsWith(tail)) return href;
  const start = href.slice(0, href.length - tail.length);
  return start + homeAssistantPath(decodeUnreserved(url.pathname)) + decodeUnreserved(url.search) + decodeUnreserved(url.hash);
}

function isSpecial(protocol: string): boolean {
  return ['http:', 'https:', 'ws:', 'wss:', 'ftp:', 'file:'].includes(protocol);
}

function decodeUnreserved(text: string): string {
  return text.replace(percentEncoded, (_match, hex: string) => {
    const character = String.fromCharCode(Number.parseInt(hex, 16));
    return unreserved.test(character) ? character : `%${hex.toUpperCase()}`;
  });
}

/** Every escape decoded, `%2F` included: some servers route on the decoded path, so a rule must see what they see. */
function decodeAll(text: string): string {
  return text.replace(percentEncoded, (_match, hex: string) => String.fromCharCode(Number.parseInt(hex, 16)));
}

function homeAssistantPath(path: string): string {
  const match = homeAssistantService.exec(decodeAll(path));
  if (!match) return path;
  const [, prefix = '/', domain, service] = match as unknown as [string, string | undefined, string, string];
  return `${prefix}api/services/${domain.toLowerCase()}/${service.toLowerCase()}`;
}
