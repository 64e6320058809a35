import { Type, type Static } from '@sinclair/typebox';
import { loadHtmlLibraries } from './http/html-libraries.ts';
import type { Config } from '../../config.ts';
import type { Tool } from '../tool.ts';
import {
  browserUserAgent,
  decodeText,
  fetchLimited,
  megabyte,
  parseHttpUrl,
  type LimitedFetchResult,
} from './http/fetch-limited.ts';
import { createNetworkGuard, type NetworkGuard } from './http/network-guard.ts';
import { toolFailure } from '../../failure.ts';

const duckDuckGoUrl = 'https://html.duckduckgo.com/html/';
const defaultResultCount = 5;
const maximumResultCount = 20;
const maximumSnippetCharacters = 400;
const searchTimeoutMs = 20_000;
const maximumResponseBytes = 3 * megabyte;

const parameters = Type.Object(
  {
    query: Type.String(),
    max_results: Type.Optional(Type.Integer({ minimum: 1, maximum: maximumResultCount, default: defaultResultCount })),
  },
  { additionalProperties: false },
);

type WebSearchArguments = Static<typeof parameters>;

interface SearchResult {
  title: string;
  url: string;
  snippet: string;
}

type SearchOutcome = { ok: true; results: SearchResult[] } | { ok: false; error: string };

export interface WebSearchOptions {
  config: Config;
  /** The network tools' guard. The search endpoint is the person's choice, so private addresses stay reachable. */
  network?: NetworkGuard;
  /** Replaces the guarded fetch (tests). */
  fetch?: typeof fetch;
}

function collapse(text: string | null | undefined): string {
  return (text ?? '').replace(/\s+/g, ' ').trim();
}

function clip(text: string, length: number): string {
  return text.length > length ? `${text.slice(0, length - 1)}…` : text;
}

function formatResults(results: readonly SearchResult[]): string {
  return results
    .map((result, index) => {
      const lines = [`${index + 1}. ${result.title || result.url}`, `   ${result.url}`];
      if (result.snippet) lines.push(`   ${clip(result.snippet, maximumSnippetCharacters)}`);
      return lines.join('\n');
    })
    .join('\n\n');
}

/** DuckDuckGo links point at its redirector `//duckduckgo.com/l/?uddg=<encoded target>`. */
function unwrapDuckDuckGoUrl(href: string): string {
  try {
    const url = new URL(href, duckDuckGoUrl);
    const target = url.hostname.endsWith('duckduckgo.com') && url.pathname === '/l/' ? url.searchParams.get('uddg') : null;
    return target ?? url.href;
  } catch {
    return href;
  }
}

async function parseDuckDuckGoHtml(html: string): Promise<SearchOutcome> {
  const { parseHTML } = await loadHtmlLibraries();
  const { document } = parseHTML(html);
  if (document.querySelector('.anomaly-modal, #challenge-form')) {
    return { ok: false, error: 'DuckDuckGo answered with a bot check instead of results. Wait a few minutes and retry, or set WEB_SEARCH_URL to a SearXNG instance.' };
  }
  const results: SearchResult[] = [];
  for (const link of document.querySelectorAll('a.result__a')) {
    const container = link.closest('.result') ?? link.parentElement;
    if (container?.classList.contains('result--ad')) continue;
    const url = unwrapDuckDuckGoUrl(link.getAttribute('href') ?? '');
    if (parseHttpUrl(url)?.hostname.endsWith('duckduckgo.com') ?? true) continue;
    results.push({ title: collapse(link.textContent), url, snippet: collapse(container?.querySelector('.result__snippet')?.textContent) });
  }
  return { ok: true, results };
}

function failedFetch(result: Extract<LimitedFetchResult, { ok: false }>, service: string): SearchOutcome {
  return { ok: false, error: `Searching ${service} failed. ${result.message}` };
}

async function searchDuckDuckGo(query: string, signal: AbortSignal, fetchImplementation: typeof fetch): Promise<SearchOutcome> {
  const result = await fetchLimited({
    url: duckDuckGoUrl,
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', 'user-agent': browserUserAgent, accept: 'text/html' },
    body: new URLSearchParams({ q: query }).toString(),
    timeoutMs: searchTimeoutMs,
    maxBytes: maximumResponseBytes,
    signal,
    fetch: fetchImplementation,
  });
  if (!result.ok) return failedFetch(result, 'DuckDuckGo');
  const { status, statusText, bytes, headers } = result.response;
  if (status !== 200) {
    return {
      ok: false,
      error: `DuckDuckGo answered HTTP ${status} ${statusText} (202 and 403 mean it is limiting automated searches). Retry later, or set WEB_SEARCH_URL to a SearXNG instance.`,
    };
  }
  return parseDuckDuckGoHtml(decodeText(bytes, headers.get('content-type')));
}

async function searchSearxng(baseUrl: string, query: string, signal: AbortSignal, fetchImplementation: typeof fetch): Promise<SearchOutcome> {
  let endpoint: URL;
  try {
    endpoint = new URL('search', baseUrl.endsWith('/') ? baseUrl : `${baseUrl}/`);
  } catch {
    return { ok: false, error: `WEB_SEARCH_URL="${baseUrl}" is not a valid URL; set it to the SearXNG base URL, e.g. http://localhost:8888.` };
  }
  endpoint.searchParams.set('q', query);
  endpoint.searchParams.set('format', 'json');
  const result = await fetchLimited({
    url: endpoint.href,
    headers: { accept: 'application/json' },
    timeoutMs: searchTimeoutMs,
    maxBytes: maximumResponseBytes,
    signal,
    fetch: fetchImplementation,
  });
  if (!result.ok) return failedFetch(result, `SearXNG at ${baseUrl}`);
  const { status, statusText, bytes, headers } = result.response;
  if (status === 403) {
    return {
      ok: false,
      error: `SearXNG at ${baseUrl} answered 403 Forbidden: its JSON format is probably disabled. Add "json" to search.formats in the instance's settings.yml and restart it.`,
    };
  }
  if (status !== 200) return { ok: false, error: `SearXNG at ${baseUrl} answered HTTP ${status} ${statusText}.` };
  let body: { results?: unknown };
  try {
    body = JSON.parse(decodeText(bytes, headers.get('content-type')));
  } catch {
    return { ok: false, error: `SearXNG at ${baseUrl} did not answer JSON; check that WEB_SEARCH_URL is the instance's base URL.` };
  }
  const entries = Array.isArray(body?.results) ? (body.results as Array<Record<string, unknown>>) : [];
  const results = entries
    .filter((entry) => typeof entry?.url === 'string')
    .map((entry) => ({ title: collapse(String(entry.title ?? '')), url: String(entry.url), snippet: collapse(String(entry.content ?? '')) }));
  return { ok: true, results };
}

export function createWebSearchTool(options: WebSearchOptions): Tool<WebSearchArguments> {
  const searxngUrl = options.config.WEB_SEARCH_URL.trim();
  const network = (options.network ?? createNetworkGuard()).allowingPrivate();
  const fetchImplementation = options.fetch ?? network.fetch;
  return {
    name: 'web_search',
    description: 'Search the web; returns numbered results (title, URL, snippet) to read with web_view.',
    parameters,
    untrustedSource: () => 'web search results',
    // The query goes to the search engine: once the run has read outside content, it may only repeat what was read or said.
    outflow: (args) => ({ request: [args.query] }),
    async execute(args, context) {
      const query = args.query.trim();
      if (query === '') return toolFailure('Send query: the words to search for.');
      const maximum = Math.min(Math.max(args.max_results ?? defaultResultCount, 1), maximumResultCount);
      const outcome = searxngUrl
        ? await searchSearxng(searxngUrl, query, context.signal, fetchImplementation)
        : await searchDuckDuckGo(query, context.signal, fetchImplementation);
      if (!outcome.ok) return toolFailure(outcome.error);
      if (outcome.results.length === 0) return `No results for "${query}". Try fewer or different words.`;
      return formatResults(outcome.results.slice(0, maximum));
    },
    dispose: () => network.close(),
  };
}
