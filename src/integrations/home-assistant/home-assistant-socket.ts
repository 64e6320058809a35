import { ERR_CANNOT_CONNECT, ERR_INVALID_AUTH, type HaWebSocket } from 'home-assistant-js-websocket';
import WebSocket from 'ws';

export interface SocketOptions {
  /** HA_URL, e.g. http://homeassistant.local:8123 */
  url: string;
  token: string;
  timeoutMs: number;
  /** Why an attempt failed, in words for a person (the library only hears an error code). */
  onFailure(reason: string): void;
}

export function websocketUrl(url: string): string {
  return `${url.replace(/\/+$/, '').replace(/^http/, 'ws')}/api/websocket`;
}

function atLeast2022_9(version: string | undefined): boolean {
  const [major = 0, minor = 0] = String(version ?? '').split('.').map(Number);
  return major > 2022 || (major === 2022 && minor >= 9);
}

/**
 * Opens a `ws` socket to Home Assistant and does the auth handshake (auth_required → auth →
 * auth_ok), for `createConnection`'s `createSocket`: Node 20 has no global WebSocket. Rejects
 * with the library's codes, so it stops retrying on a rejected token and retries otherwise.
 */
export function openHomeAssistantSocket(options: SocketOptions): Promise<HaWebSocket> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(websocketUrl(options.url), { handshakeTimeout: options.timeoutMs });
    let settled = false;
    const fail = (code: number, reason: string) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.removeAllListeners();
      socket.on('error', () => {});
      socket.terminate();
      options.onFailure(reason);
      reject(code);
    };
    const timer = setTimeout(() => fail(ERR_CANNOT_CONNECT, `no answer within ${options.timeoutMs / 1000} s`), options.timeoutMs);
    socket.on('error', (error: NodeJS.ErrnoException) => fail(ERR_CANNOT_CONNECT, error.code ?? error.message));
    socket.on('unexpected-response', (_request, response) => fail(ERR_CANNOT_CONNECT, `HTTP ${response.statusCode} at ${websocketUrl(options.url)}`));
    socket.on('close', () => fail(ERR_CANNOT_CONNECT, 'the connection closed during the handshake'));
    socket.on('message', (data) => {
      let message: { type?: string; ha_version?: string; message?: string };
      try {
        message = JSON.parse(data.toString());
      } catch {
        return fail(ERR_CANNOT_CONNECT, 'it did not answer as Home Assistant does');
      }
      switch (message.type) {
        case 'auth_required':
          socket.send(JSON.stringify({ type: 'auth', access_token: options.token }));
          return;
        case 'auth_invalid':
          return fail(ERR_INVALID_AUTH, 'token rejected');
        case 'auth_ok': {
          settled = true;
          clearTimeout(timer);
          socket.removeAllListeners();
          socket.on('error', () => {});
          const haSocket = socket as unknown as HaWebSocket;
          haSocket.haVersion = String(message.ha_version ?? '');
          // The official client asks for coalesced messages too; it reads arrays of messages.
          if (atLeast2022_9(haSocket.haVersion)) socket.send(JSON.stringify({ type: 'supported_features', id: 1, features: { coalesce_messages: 1 } }));
          resolve(haSocket);
          return;
        }
      }
    });
  });
}
