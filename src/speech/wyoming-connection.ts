import { connect, type Socket } from 'node:net';
import { unreachableMessage, socketErrorCode } from './speech-server-failures.ts';
import { encodeWyomingEvent, WyomingEventReader, WyomingProtocolError, type WyomingEvent } from './wyoming-framing.ts';

/** Why a Wyoming exchange failed: `unreachable` (no connection, or it broke) or `failed` (it answered wrongly, or too late). */
export class WyomingFailure extends Error {
  constructor(
    readonly kind: 'unreachable' | 'failed' | 'aborted',
    message: string,
  ) {
    super(message);
  }
}

export interface WyomingAddress {
  host: string;
  port: number;
  /** tcp://host:port, for messages. */
  shown: string;
  /** What should be listening, for the fix: "wyoming-faster-whisper". */
  runningWhat: string;
}

const connectTimeoutMs = 5_000;

/** Host and port of a tcp://host:port URL. */
export function wyomingAddress(url: string, runningWhat: string): WyomingAddress {
  const parsed = new URL(url);
  const host = parsed.hostname.replace(/^\[(.*)\]$/, '$1');
  return { host, port: Number(parsed.port), shown: `tcp://${parsed.host}`, runningWhat };
}

/**
 * One TCP connection to a Wyoming server, for one exchange: events sent with `send`, read in
 * order with `next`. Everything that goes wrong is a WyomingFailure in words; the whole
 * exchange is bounded by `timeoutMs` and ended by the signal.
 */
export class WyomingConnection {
  private readonly reader = new WyomingEventReader();
  private readonly queue: WyomingEvent[] = [];
  private failure: WyomingFailure | undefined;
  private waiting: { resolve: (event: WyomingEvent) => void; reject: (error: WyomingFailure) => void } | undefined;
  private readonly timer: NodeJS.Timeout;
  private readonly onAbort = () => this.fail(new WyomingFailure('aborted', 'Stopped before the Wyoming server answered.'));

  private constructor(
    private readonly socket: Socket,
    private readonly address: WyomingAddress,
    timeoutMs: number,
    private readonly signal: AbortSignal | undefined,
  ) {
    this.timer = setTimeout(() => this.fail(new WyomingFailure('failed', `The Wyoming server at ${address.shown} did not finish within ${timeoutMs / 1000} s.`)), timeoutMs);
    signal?.addEventListener('abort', this.onAbort, { once: true });
    socket.on('data', (chunk: Buffer) => {
      let events: WyomingEvent[];
      try {
        events = this.reader.push(chunk);
      } catch (error) {
        const reason = error instanceof WyomingProtocolError ? error.message : String(error);
        this.fail(new WyomingFailure('failed', `The server at ${address.shown} does not speak the Wyoming protocol (it sent ${reason}): is STT_URL/TTS_URL the Wyoming port?`));
        return;
      }
      for (const event of events) this.deliver(event);
    });
    socket.on('error', (error) => this.fail(new WyomingFailure('unreachable', unreachableMessage('Wyoming server', address.shown, socketErrorCode(error), address.runningWhat))));
    socket.on('close', () => this.fail(new WyomingFailure('unreachable', `The Wyoming server at ${address.shown} closed the connection before it answered: check its log.`)));
  }

  static async open(address: WyomingAddress, options: { timeoutMs: number; signal?: AbortSignal }): Promise<WyomingConnection> {
    if (options.signal?.aborted) throw new WyomingFailure('aborted', 'Stopped before the Wyoming server was asked.');
    const socket = connect({ host: address.host, port: address.port });
    socket.setNoDelay(true);
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        socket.destroy();
        reject(new WyomingFailure('unreachable', unreachableMessage('Wyoming server', address.shown, 'ETIMEDOUT', address.runningWhat)));
      }, Math.min(connectTimeoutMs, options.timeoutMs));
      const onAbort = () => {
        socket.destroy();
        reject(new WyomingFailure('aborted', 'Stopped before the Wyoming server was asked.'));
      };
      options.signal?.addEventListener('abort', onAbort, { once: true });
      const settle = () => {
        clearTimeout(timer);
        options.signal?.removeEventListener('abort', onAbort);
      };
      socket.once('connect', () => {
        settle();
        socket.removeAllListeners('error');
        resolve();
      });
      socket.once('error', (error) => {
        settle();
        socket.destroy();
        reject(new WyomingFailure('unreachable', unreachableMessage('Wyoming server', address.shown, socketErrorCode(error), address.runningWhat)));
      });
    });
    return new WyomingConnection(socket, address, options.timeoutMs, options.signal);
  }

  send(event: { type: string; data?: Record<string, unknown>; payload?: Buffer }): void {
    if (this.failure === undefined) this.socket.write(encodeWyomingEvent(event));
  }

  /** The next event the server sent; rejects with the exchange's failure once there is one. */
  next(): Promise<WyomingEvent> {
    const queued = this.queue.shift();
    if (queued) return Promise.resolve(queued);
    if (this.failure) return Promise.reject(this.failure);
    return new Promise((resolve, reject) => {
      this.waiting = { resolve, reject };
    });
  }

  /** The next event of one of `types`, skipping the others (a server may send more than the exchange needs). */
  async nextOf(...types: string[]): Promise<WyomingEvent> {
    for (;;) {
      const event = await this.next();
      if (event.type === 'error') {
        const text = typeof event.data.text === 'string' ? event.data.text : 'no reason given';
        throw new WyomingFailure('failed', `The Wyoming server at ${this.address.shown} answered with an error: ${text.slice(0, 300)}`);
      }
      if (types.includes(event.type)) return event;
    }
  }

  close(): void {
    clearTimeout(this.timer);
    this.signal?.removeEventListener('abort', this.onAbort);
    this.failure ??= new WyomingFailure('failed', 'The exchange is over.');
    this.socket.destroy();
  }

  private deliver(event: WyomingEvent): void {
    const waiting = this.waiting;
    if (waiting) {
      this.waiting = undefined;
      waiting.resolve(event);
    } else this.queue.push(event);
  }

  private fail(failure: WyomingFailure): void {
    if (this.failure) return;
    this.failure = failure;
    clearTimeout(this.timer);
    this.socket.destroy();
    const waiting = this.waiting;
    this.waiting = undefined;
    waiting?.reject(failure);
  }
}
