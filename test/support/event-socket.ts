import WebSocket from 'ws';
import type { AgentEvent, AgentEventType, EventOf } from '../../src/protocol/events.ts';

/** A real `ws` client that records every event and lets a test wait for the next one of a kind. */
export class EventSocket {
  readonly events: AgentEvent[] = [];
  private cursor = 0;
  private waiters: (() => void)[] = [];
  closeCode: number | undefined;

  private constructor(readonly socket: WebSocket) {
    socket.on('message', (data) => {
      this.events.push(JSON.parse(data.toString()) as AgentEvent);
      this.wake();
    });
    socket.on('close', (code) => {
      this.closeCode = code;
      this.wake();
    });
  }

  /** `tls.ca` is the authority a wss:// server's certificate is checked against. */
  static connect(url: string, headers: Record<string, string> = {}, tls: { ca?: string } = {}): Promise<EventSocket> {
    return new Promise((resolve, reject) => {
      const socket = new WebSocket(url, { headers, ...tls });
      const client = new EventSocket(socket);
      socket.once('open', () => resolve(client));
      socket.once('unexpected-response', (_request, response) => reject(new Error(`HTTP ${response.statusCode}`)));
      socket.once('error', reject);
    });
  }

  send(frame: unknown): void {
    this.socket.send(typeof frame === 'string' ? frame : JSON.stringify(frame));
  }

  /** Passes over every event received so far: the next wait sees only later ones. */
  skipReceived(): void {
    this.cursor = this.events.length;
  }

  /** Resolves with the next event (after the previous one waited for) of this type. */
  async next<Type extends AgentEventType>(type: Type, timeoutMs = 10_000): Promise<EventOf<Type>> {
    return (await this.nextMatching((event) => event.type === type, `"${type}"`, timeoutMs)) as EventOf<Type>;
  }

  async nextMatching(predicate: (event: AgentEvent) => boolean, description = 'matching event', timeoutMs = 10_000): Promise<AgentEvent> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      while (this.cursor < this.events.length) {
        const event = this.events[this.cursor++]!;
        if (predicate(event)) return event;
      }
      if (this.closeCode !== undefined) throw new Error(`socket closed (${this.closeCode}) before ${description}`);
      const remaining = deadline - Date.now();
      if (remaining <= 0) throw new Error(`no ${description} within ${timeoutMs} ms; saw ${JSON.stringify(this.types())}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, remaining);
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  /** Resolves once the socket is closed, with its close code. */
  async closed(timeoutMs = 10_000): Promise<number> {
    const deadline = Date.now() + timeoutMs;
    while (this.closeCode === undefined) {
      if (Date.now() > deadline) throw new Error('socket did not close');
      await new Promise<void>((resolve) => this.waiters.push(resolve));
    }
    return this.closeCode;
  }

  types(): AgentEventType[] {
    return this.events.map((event) => event.type);
  }

  ofType<Type extends AgentEventType>(type: Type): EventOf<Type>[] {
    return this.events.filter((event): event is EventOf<Type> => event.type === type);
  }

  close(): void {
    this.socket.close();
  }

  private wake(): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const waiter of waiters) waiter();
  }
}
