import { connect } from 'node:tls';
import { Agent, fetch } from 'undici';
import { EventSocket } from './event-socket.ts';

/** A client of an https:// Hearth that trusts only `ca`: REST through undici, sockets through `ws`. */
export interface HttpsClient {
  readonly baseUrl: string;
  request(method: string, url: string, body?: unknown, headers?: Record<string, string>): Promise<{ status: number; headers: Headers; text: string; body: any }>;
  socket(path: string, headers?: Record<string, string>): Promise<EventSocket>;
  /** The SHA-256 fingerprint of the certificate a new TLS connection is served. */
  servedFingerprint(): Promise<string>;
  close(): Promise<void>;
}

export function httpsClient(baseUrl: string, ca: string): HttpsClient {
  const url = new URL(baseUrl);
  if (url.protocol !== 'https:') throw new Error(`not an https URL: ${baseUrl}`);
  const dispatcher = new Agent({ connect: { ca } });
  return {
    baseUrl,
    async request(method, path, body, headers = {}) {
      const response = await fetch(baseUrl + path, {
        method,
        dispatcher,
        headers: { ...(body !== undefined && { 'content-type': 'application/json' }), ...headers },
        ...(body !== undefined && { body: JSON.stringify(body) }),
      });
      const text = await response.text();
      const isJson = response.headers.get('content-type')?.startsWith('application/json') === true;
      return { status: response.status, headers: response.headers as unknown as Headers, text, body: isJson && text !== '' ? JSON.parse(text) : undefined };
    },
    socket: (path, headers = {}) => EventSocket.connect(`${baseUrl.replace(/^https/, 'wss')}${path}`, headers, { ca }),
    servedFingerprint: () =>
      new Promise((resolve, reject) => {
        // A new connection each time, without a session to resume: it is served the certificate in use now.
        const socket = connect({ host: url.hostname, port: Number(url.port), servername: url.hostname, ca }, () => {
          const fingerprint = socket.getPeerCertificate().fingerprint256;
          socket.end();
          resolve(fingerprint);
        });
        socket.once('error', reject);
      }),
    close: () => dispatcher.close(),
  };
}
