import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export type Handler = (request: IncomingMessage, response: ServerResponse, body: string) => void;

const servers: Server[] = [];

/**
 * Starts an HTTP server on a free loopback port that hands each request, with its whole body, to `handler`, and
 * gives its base URL. A test file that serves calls `afterEach(closeServers)`.
 */
export async function serve(handler: Handler): Promise<string> {
  const server = createServer(async (request, response) => {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    handler(request, response, Buffer.concat(chunks).toString('utf8'));
  });
  servers.push(server);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** Closes every server started since the last call, dropping any connection still open. */
export function closeServers(): void {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    server.close();
  }
}
