// The measuring client: REST through fetch, events through real `ws` sockets, each
// event stamped with its receipt time before it is parsed.
import WebSocket from 'ws';
import type { AgentEvent, AgentEventType, EventOf } from '../src/protocol/events.ts';
import { epochNow } from './epoch-time.ts';

export type EventHandler = (event: AgentEvent, receivedAt: number) => void;

export interface Received<Type extends AgentEventType> {
  event: EventOf<Type>;
  receivedAt: number;
}

/** Where the server listens, and the headers every request needs (an AUTH_TOKEN). */
export interface Endpoint {
  baseUrl: string;
  headers: Record<string, string>;
}

export async function createSession({ baseUrl, headers }: Endpoint): Promise<string> {
  const response = await fetch(`${baseUrl}/sessions`, {
    method: 'POST',
    headers: { ...headers, 'content-type': 'application/json' },
    body: '{}',
  });
  const body = (await response.json()) as { session_id?: string };
  if (response.status !== 201 || typeof body.session_id !== 'string') {
    throw new Error(`POST /sessions answered ${response.status}: ${JSON.stringify(body)}`);
  }
  return body.session_id;
}

export class SessionSocket {
  private readonly handlers = new Set<EventHandler>();
  private readonly closeHandlers = new Set<(code: number) => void>();

  private constructor(private readonly socket: WebSocket) {
    socket.on('message', (data: Buffer) => {
      const receivedAt = epochNow();
      const event = JSON.parse(data.toString()) as AgentEvent;
      for (const handler of this.handlers) handler(event, receivedAt);
    });
    socket.on('close', (code) => {
      for (const handler of this.closeHandlers) handler(code);
    });
  }

  /** Connects and resolves once the server has subscribed the socket (its session_sync arrived). */
  static async connect({ baseUrl, headers }: Endpoint, sessionId: string): Promise<SessionSocket> {
    const socket = new WebSocket(`${baseUrl.replace(/^http/, 'ws')}/ws/sessions/${sessionId}`, { headers, perMessageDeflate: false });
    const client = new SessionSocket(socket);
    const synced = client.next('session_sync', 10_000);
    await new Promise<void>((resolve, reject) => {
      socket.once('open', () => resolve());
      socket.once('error', reject);
      socket.once('unexpected-response', (_request, response) => reject(new Error(`WebSocket upgrade answered ${response.statusCode}`)));
    });
    await synced;
    return client;
  }

  listen(handler: EventHandler): () => void {
    this.handlers.add(handler);
    return () => this.handlers.delete(handler);
  }

  send(frame: unknown): void {
    this.socket.send(JSON.stringify(frame));
  }

  /** The next event of this type; an `error` event, a close or the timeout rejects. */
  next<Type extends AgentEventType>(type: Type, timeoutMs: number): Promise<Received<Type>> {
    return this.nextMatching(type, () => true, timeoutMs);
  }

  /** The next event of this type that `matches`; others of the type are passed over. An `error` event, a close or the timeout rejects. */
  nextMatching<Type extends AgentEventType>(
    type: Type,
    matches: (event: EventOf<Type>) => boolean,
    timeoutMs: number,
    description: string = type,
  ): Promise<Received<Type>> {
    return new Promise((resolve, reject) => {
      const finish = (settle: () => void) => {
        clearTimeout(timer);
        stopListening();
        this.closeHandlers.delete(onClose);
        settle();
      };
      const stopListening = this.listen((event, receivedAt) => {
        if (event.type === type && matches(event as EventOf<Type>)) finish(() => resolve({ event: event as EventOf<Type>, receivedAt }));
        else if (event.type === 'error') finish(() => reject(new Error(`server sent error ${event.code}: ${event.message}`)));
      });
      const onClose = (code: number) => finish(() => reject(new Error(`socket closed (${code}) while waiting for ${description}`)));
      this.closeHandlers.add(onClose);
      const timer = setTimeout(() => finish(() => reject(new Error(`no ${description} within ${timeoutMs} ms`))), timeoutMs);
    });
  }

  close(): Promise<void> {
    if (this.socket.readyState === WebSocket.CLOSED) return Promise.resolve();
    return new Promise((resolve) => {
      this.socket.once('close', () => resolve());
      this.socket.close();
    });
  }
}
