import { Type, type Static } from '@sinclair/typebox';
import type { Tool } from '../tool.ts';
import { keepHead } from '../truncate.ts';
import {
  browserUserAgent,
  decodeText,
  describeSize,
  fetchLimited,
  hostOf,
  isHtmlMediaType,
  isTextual,
  megabyte,
  parseHttpUrl,
  type LimitedResponse,
} from './http/fetch-limited.ts';
import { createNetworkGuard, type NetworkGuard } from './http/network-guard.ts';
import { htmlToReadableText } from './http/readable-text.ts';
import { toolFailure } from '../../failure.ts';

const smallestMaximumCharacters = 500;
const defaultMaximumCharacters = 12_000;
const largestMaximumCharacters = 100_000;
const pageTimeoutMs = 30_000;
const maximumPageBytes = 5 * megabyte;
const errorExcerptCharacters = 300;

const parameters = Type.Object(
  {
    url: Type.String(),
    max_chars: Type.Optional(Type.Integer({ minimum: smallestMaximumCharacters, maximum: largestMaximumCharacters, default: defaultMaximumCharacters })),
  },
  { additionalProperties: false },
);

type WebViewArguments = Static<typeof parameters>;

async function readPage(response: LimitedResponse): Promise<{ title: string; text: string }> {
  const contentType = response.headers.get('content-type');
  const text = decodeText(response.bytes, contentType);
  const looksLikeHtml = response.mediaType === '' && /^\s*</.test(text);
  if (isHtmlMediaType(response.mediaType) || looksLikeHtml) return htmlToReadableText(text);
  return { title: '', text: text.replace(/\r\n/g, '\n').trim() };
}

export interface WebViewOptions {
  /** Refuses Hearth's own API, cloud metadata and (HTTP_BLOCK_PRIVATE) private addresses; a default guard otherwise. */
  network?: NetworkGuard;
}

export function createWebViewTool(options: WebViewOptions = {}): Tool<WebViewArguments> {
  const network = options.network ?? createNetworkGuard();
  return {
    name: 'web_view',
    description: "Read a web page's title and main text (no scripts, menus or markup); plain text and JSON as is.",
    parameters,
    subject: (args) => `GET ${args.url}`,
    subjectParts: ['word', 'url'],
    untrustedSource: (args) => hostOf(args.url),
    outflow: (args) => ({ request: [args.url] }),
    async execute(args, context) {
      const url = parseHttpUrl(args.url);
      if (!url) return toolFailure(`"${args.url}" is not an absolute http(s) URL; send one like https://example.com/page.`);
      const maximumCharacters = Math.min(Math.max(args.max_chars ?? defaultMaximumCharacters, smallestMaximumCharacters), largestMaximumCharacters);
      const result = await fetchLimited({
        url: url.href,
        headers: { 'user-agent': browserUserAgent, accept: 'text/html,application/xhtml+xml,text/plain;q=0.9,*/*;q=0.8' },
        timeoutMs: pageTimeoutMs,
        maxBytes: maximumPageBytes,
        signal: context.signal,
        fetch: network.fetch,
      });
      if (!result.ok) return toolFailure(result.message);
      const response = result.response;
      if (!isTextual(response.mediaType, response.bytes)) {
        return toolFailure(
          `${response.url} is ${response.mediaType || 'binary data'} (${describeSize(response.bytes.length)}), not a page web_view can read as text.`,
        );
      }
      const page = await readPage(response);
      if (response.status >= 400) {
        const excerpt = keepHead(page.text, errorExcerptCharacters);
        const output = `${response.url} answered HTTP ${response.status} ${response.statusText}.${excerpt ? `\n\n${excerpt}` : ''}`;
        return { output, success: false, ...(excerpt && { outside: { source: new URL(response.url).host, quotable: true } }) };
      }
      const heading = [page.title && `Title: ${page.title}`, `URL: ${response.url}`].filter(Boolean).join('\n');
      const text = page.text || '(The page has no readable text; it may need JavaScript to render its content.)';
      const hint = maximumCharacters < largestMaximumCharacters ? `call again with a larger max_chars (up to ${largestMaximumCharacters})` : '';
      return `${heading}\n\n${keepHead(text, maximumCharacters, hint)}`;
    },
    dispose: () => network.close(),
  };
}
