import { STATUS_CODES } from 'node:http';
import { NetworkRefusedError } from './network-guard.ts';

export const megabyte = 1024 * 1024;

/** Some sites and search engines refuse clients that do not look like a browser. */
export const browserUserAgent = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0 Safari/537.36';

export interface LimitedRequest {
  url: string;
  method?: string;
  headers?: Record<string, string>;
  body?: string;
  timeoutMs: number;
  maxBytes: number;
  /** The caller's signal: the user's stop. */
  signal: AbortSignal;
  /** The network tools' guarded fetch (NetworkGuard.fetch); tests may give another. */
  fetch: typeof fetch;
}

export interface LimitedResponse {
  status: number;
  statusText: string;
  /** The URL after redirects. */
  url: string;
  headers: Headers;
  /** Lower-case media type without parameters, e.g. "text/html"; empty when the server sent none. */
  mediaType: string;
  bytes: Buffer;
  /** The body was longer than maxBytes and reading stopped there. */
  cutAtLimit: boolean;
}

export type FetchFailureReason = 'timeout' | 'cancelled' | 'network';

export type LimitedFetchResult =
  | { ok: true; response: LimitedResponse }
  | { ok: false; reason: FetchFailureReason; message: string };

/** Fetches with a timeout, the caller's abort signal and a cap on the body size; failures are data. */
export async function fetchLimited(request: LimitedRequest): Promise<LimitedFetchResult> {
  const timeout = AbortSignal.timeout(request.timeoutMs);
  const signal = AbortSignal.any([request.signal, timeout]);
  try {
    const response = await request.fetch(request.url, {
      method: request.method ?? 'GET',
      headers: request.headers,
      body: request.body,
      signal,
      redirect: 'follow',
    });
    const { bytes, cutAtLimit } = await readCapped(response, request.maxBytes);
    return {
      ok: true,
      response: {
        status: response.status,
        statusText: response.statusText || STATUS_CODES[response.status] || '',
        url: response.url || request.url,
        headers: response.headers,
        mediaType: mediaTypeOf(response.headers.get('content-type')),
        bytes,
        cutAtLimit,
      },
    };
  } catch (error) {
    if (request.signal.aborted) return { ok: false, reason: 'cancelled', message: `The request to ${request.url} was cancelled.` };
    if (timeout.aborted) {
      return { ok: false, reason: 'timeout', message: `No complete response from ${request.url} within ${request.timeoutMs / 1000} s.` };
    }
    return { ok: false, reason: 'network', message: describeNetworkError(error, request.url) };
  }
}

async function readCapped(response: Response, maxBytes: number): Promise<{ bytes: Buffer; cutAtLimit: boolean }> {
  if (!response.body) return { bytes: Buffer.alloc(0), cutAtLimit: false };
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return { bytes: Buffer.concat(chunks, size), cutAtLimit: false };
    chunks.push(value);
    size += value.byteLength;
    if (size > maxBytes) {
      await reader.cancel().catch(() => {});
      return { bytes: Buffer.concat(chunks, size).subarray(0, maxBytes), cutAtLimit: true };
    }
  }
}

/** The error that says what happened: fetch wraps it in a "fetch failed" TypeError, and trying several addresses in an AggregateError. */
function rootCause(error: unknown): unknown {
  let cause = error;
  if (cause instanceof TypeError && cause.cause !== undefined) cause = cause.cause;
  if (cause instanceof AggregateError && cause.errors.length > 0) {
    return cause.errors.find((inner) => inner instanceof NetworkRefusedError) ?? cause.errors[0];
  }
  return cause;
}

function describeNetworkError(error: unknown, url: string): string {
  const cause = rootCause(error);
  const target = parseHttpUrl(url);
  const requestedPort = Number(target?.port) || (target?.protocol === 'https:' ? 443 : 80);
  if (cause instanceof NetworkRefusedError) {
    const redirected = target !== undefined && (cause.hostname !== target.hostname.replace(/^\[|\]$/g, '') || cause.refusal.port !== requestedPort);
    return redirected ? `${cause.message} (${url} redirected there.)` : cause.message;
  }
  const { code, address, port } = cause as { code?: unknown; address?: unknown; port?: unknown };
  const message = cause instanceof Error ? cause.message : String(cause);
  const hostname = target?.hostname ?? url;
  const shownPort = typeof port === 'number' ? port : requestedPort;
  const place = typeof address === 'string' && address !== hostname.replace(/^\[|\]$/g, '') ? `${hostname} (${address}) port ${shownPort}` : `${hostname} port ${shownPort}`;
  switch (code) {
    case 'ECONNREFUSED':
      return `${place} is unreachable: the connection was refused (nothing is listening on that port, or a firewall rejects it).`;
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return `The host name ${hostname} could not be resolved (DNS lookup failed). Check the spelling, or whether this machine can reach that network.`;
    case 'ECONNRESET':
    case 'UND_ERR_SOCKET':
      return `The connection to ${place} was closed before a complete response arrived.`;
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
      return `${place} is unreachable from this machine (no network route).`;
    case 'ETIMEDOUT':
    case 'UND_ERR_CONNECT_TIMEOUT':
      return `${place} is unreachable: connecting timed out.`;
    default:
      if (typeof code === 'string' && /CERT|TLS|SSL/.test(code)) return `The TLS certificate of ${target?.host ?? url} was rejected (${code}): ${message}.`;
      return `The request to ${url} failed: ${message || String(code ?? 'unknown error')}.`;
  }
}

/** The URL when it is an absolute http(s) URL. */
export function parseHttpUrl(text: string): URL | undefined {
  try {
    const url = new URL(text.trim());
    return url.protocol === 'http:' || url.protocol === 'https:' ? url : undefined;
  } catch {
    return undefined;
  }
}

/** The host a request to `text` reads from, as its provenance names it; undefined for anything but an http(s) URL. */
export function hostOf(text: string): string | undefined {
  return parseHttpUrl(text)?.host;
}

export function mediaTypeOf(contentType: string | null): string {
  return (contentType ?? '').split(';')[0]!.trim().toLowerCase();
}

export function isJsonMediaType(mediaType: string): boolean {
  return /[/+]json$/.test(mediaType);
}

export function isHtmlMediaType(mediaType: string): boolean {
  return mediaType === 'text/html' || mediaType === 'application/xhtml+xml';
}

/** Text formats by media type; without one, text is assumed unless the bytes hold a NUL. */
export function isTextual(mediaType: string, bytes: Uint8Array): boolean {
  if (mediaType === '') return !bytes.subarray(0, 8192).includes(0);
  return /^text\/|[/+](json|ndjson|xml|yaml|x-yaml|javascript|ecmascript|x-www-form-urlencoded|graphql|sql|csv)$/.test(mediaType);
}

export function decodeText(bytes: Uint8Array, contentType: string | null): string {
  const charset = /charset="?([^";\s]+)/i.exec(contentType ?? '')?.[1] ?? 'utf-8';
  try {
    return new TextDecoder(charset).decode(bytes);
  } catch {
    return new TextDecoder('utf-8').decode(bytes);
  }
}

export function describeSize(byteCount: number): string {
  if (byteCount < 1024) return `${byteCount} bytes`;
  if (byteCount < megabyte) return `${(byteCount / 1024).toFixed(1)} KB`;
  return `${(byteCount / megabyte).toFixed(1)} MB`;
}
