import { Type, type Static } from '@sinclair/typebox';
import type { Tool } from '../tool.ts';
import { keepHead } from '../truncate.ts';
import {
  decodeText,
  describeSize,
  fetchLimited,
  hostOf,
  isJsonMediaType,
  isTextual,
  megabyte,
  parseHttpUrl,
  type LimitedResponse,
} from './http/fetch-limited.ts';
import { createNetworkGuard, type NetworkGuard } from './http/network-guard.ts';
import { toolFailure } from '../../failure.ts';

const methods = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS'] as const;
type Method = (typeof methods)[number];

const defaultTimeoutSeconds = 30;
const maximumTimeoutSeconds = 300;
const maximumBodyBytes = 5 * megabyte;
const maximumOutputCharacters = 20_000;
const reportedHeaders = ['content-length', 'location'];

const parameters = Type.Object(
  {
    method: Type.Unsafe<Method>({ type: 'string', enum: [...methods] }),
    url: Type.String(),
    headers: Type.Optional(Type.Unsafe<Record<string, string>>({ type: 'object', additionalProperties: { type: 'string' } })),
    body: Type.Optional(
      Type.Unsafe<string | object>({ type: ['string', 'object', 'array'], description: 'Text, or a JSON value sent as JSON' }),
    ),
    timeout_s: Type.Optional(Type.Integer({ minimum: 1, maximum: maximumTimeoutSeconds, default: defaultTimeoutSeconds })),
  },
  { additionalProperties: false },
);

type HttpRequestArguments = Static<typeof parameters>;

function requestHeadersAndBody(args: HttpRequestArguments): { headers: Record<string, string>; body?: string } {
  const headers = { ...args.headers };
  if (args.body === undefined) return { headers };
  if (typeof args.body === 'string') return { headers, body: args.body };
  const hasContentType = Object.keys(headers).some((name) => name.toLowerCase() === 'content-type');
  if (!hasContentType) headers['content-type'] = 'application/json';
  return { headers, body: JSON.stringify(args.body) };
}

function describeBody(response: LimitedResponse): string {
  const { bytes, mediaType } = response;
  if (bytes.length === 0) return '(empty body)';
  if (!isTextual(mediaType, bytes)) return `(binary body: ${mediaType || 'unknown type'}, ${describeSize(bytes.length)}; not shown)`;
  const text = decodeText(bytes, response.headers.get('content-type'));
  if (isJsonMediaType(mediaType) && !response.cutAtLimit) {
    try {
      return JSON.stringify(JSON.parse(text), null, 2);
    } catch {
      return text;
    }
  }
  return text;
}

function formatResponse(response: LimitedResponse, requestedUrl: string): string {
  const lines = [`HTTP ${response.status} ${response.statusText}`.trim()];
  const contentType = response.headers.get('content-type');
  if (contentType) lines.push(`content-type: ${contentType}`);
  for (const name of reportedHeaders) {
    const value = response.headers.get(name);
    if (value !== null) lines.push(`${name}: ${value}`);
  }
  if (response.url !== requestedUrl) lines.push(`redirected to: ${response.url}`);
  const hint = response.cutAtLimit
    ? `reading stopped after ${describeSize(maximumBodyBytes)}; request a smaller resource`
    : 'request a smaller resource (filters, pagination, a Range header)';
  const body = keepHead(describeBody(response), maximumOutputCharacters, hint);
  return `${lines.join('\n')}\n\n${body}`;
}

export interface HttpRequestOptions {
  /** Refuses Hearth's own API, cloud metadata and (HTTP_BLOCK_PRIVATE) private addresses; a default guard otherwise. */
  network?: NetworkGuard;
}

export function createHttpRequestTool(options: HttpRequestOptions = {}): Tool<HttpRequestArguments> {
  const network = options.network ?? createNetworkGuard();
  return {
    name: 'http_request',
    description: 'Send an HTTP request; returns status, content type and body.',
    parameters,
    subject: (args) => `${args.method} ${args.url}`,
    subjectParts: ['word', 'url'],
    untrustedSource: (args) => hostOf(args.url),
    // Headers go out too: each value is a place to carry data.
    outflow: (args) => ({ request: [args.url, requestHeadersAndBody(args).body ?? '', ...Object.values(args.headers ?? {})] }),
    // Above the largest timeout_s, so the request's own timeout reports first.
    timeoutMs: (maximumTimeoutSeconds + 5) * 1000,
    async execute(args, context) {
      const url = parseHttpUrl(args.url);
      if (!url) return toolFailure(`"${args.url}" is not an absolute http(s) URL; send one like https://api.example.com/items.`);
      if (args.body !== undefined && (args.method === 'GET' || args.method === 'HEAD')) {
        return toolFailure(`A ${args.method} request cannot have a body: use POST, PUT or PATCH, or put the data in the URL's query string.`);
      }
      const timeoutSeconds = Math.min(Math.max(args.timeout_s ?? defaultTimeoutSeconds, 1), maximumTimeoutSeconds);
      const result = await fetchLimited({
        url: url.href,
        method: args.method,
        ...requestHeadersAndBody(args),
        timeoutMs: timeoutSeconds * 1000,
        maxBytes: maximumBodyBytes,
        signal: context.signal,
        fetch: network.fetch,
      });
      if (!result.ok) {
        if (result.reason === 'timeout') {
          return toolFailure(`${result.message} Retry with a larger timeout_s (up to ${maximumTimeoutSeconds}) if the service is slow.`);
        }
        return toolFailure(result.message);
      }
      return { output: formatResponse(result.response, url.href), metadata: { status: result.response.status } };
    },
    dispose: () => network.close(),
  };
}
