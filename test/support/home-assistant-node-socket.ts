import { ERR_CANNOT_CONNECT, ERR_INVALID_AUTH, type ConnectionOptions, type HaWebSocket } from 'home-assistant-js-websocket';
import WebSocket from 'ws';

/**
 * The `createSocket` option of `home-assistant-js-websocket` for Node 20, which has no global
 * WebSocket: what the library's own one does in a browser, with `ws`. It opens the socket, answers
 * `auth_required`, and resolves with the socket once `auth_ok` arrives, marked with its `haVersion`;
 * it rejects with the library's own error codes, which its reconnect logic reads (ERR_INVALID_AUTH
 * stops retrying).
 */
export function createNodeSocket(options: ConnectionOptions): Promise<HaWebSocket> {
  const auth = options.auth!;
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(auth.wsUrl);
    let invalidAuth = false;
    const onMessage = (data: WebSocket.RawData) => {
      const message = JSON.parse(data.toString()) as { type: string; ha_version?: string };
      if (message.type === 'auth_required') socket.send(JSON.stringify({ type: 'auth', access_token: auth.accessToken }));
      else if (message.type === 'auth_invalid') {
        invalidAuth = true;
        socket.close();
      } else if (message.type === 'auth_ok') {
        socket.off('message', onMessage);
        socket.off('close', onClose);
        socket.off('error', onClose);
        Object.assign(socket, { haVersion: message.ha_version });
        socket.send(JSON.stringify({ type: 'supported_features', id: 1, features: { coalesce_messages: 1 } }));
        resolve(socket as unknown as HaWebSocket);
      }
    };
    const onClose = () => {
      socket.off('close', onClose);
      socket.off('error', onClose);
      reject(invalidAuth ? ERR_INVALID_AUTH : ERR_CANNOT_CONNECT);
    };
    socket.on('message', onMessage);
    socket.on('close', onClose);
    socket.on('error', onClose);
  });
}
