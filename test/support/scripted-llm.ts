import { EventEmitter } from 'node:events';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setImmediate as yieldToEventLoop, setTimeout as sleep } from 'node:timers/promises';
import { hashedEmbedding } from './hashed-embedding.ts';

export interface ScriptedToolCall {
  name: string;
  arguments: Record<string, unknown> | string;
}

export interface ScriptStep {
  thinking?: string;
  thinkTags?: boolean;
  content?: string;
  chunks?: string[];
  chunkCount?: number;
  chunkText?: (index: number) => string;
  toolCalls?: ScriptedToolCall[];
  usage?: { promptTokens: number; completionTokens: number };
  chunkSize?: number;
  delayMs?: number;
  hang?: boolean;
  /** Take the request and never answer, not even with headers (a backend stuck before replying). */
  silent?: boolean;
  status?: number;
  errorMessage?: string;
  destroy?: boolean;
}

export interface RecordedRequest {
  path: string;
  method: string;
  headers: Record<string, string | string[] | undefined>;
  body: any;
  disconnected: boolean;
  completed: boolean;
}

export type Responder = (request: RecordedRequest, index: number) => ScriptStep;

/** `end`: a chat request's response closed, answered or not (with `request`, counts the requests in flight). */
export type ScriptedLlmEvent = 'request' | 'disconnect' | 'chunk' | 'end';

/** Vectors for the texts of one embedding request, or an error the server answers with instead. */
export type EmbeddingAnswer = number[][] | { status: number; message: string };
export type EmbeddingResponder = (input: string[], request: RecordedRequest) => EmbeddingAnswer | Promise<EmbeddingAnswer>;

export interface ScriptedLlm {
  readonly url: string;
  /** Chat requests. */
  readonly requests: RecordedRequest[];
  /** Embedding requests (Ollama's /api/embed, /v1/embeddings), kept apart so chat requests count as before. */
  readonly embedRequests: RecordedRequest[];
  /** How embedding requests are answered; by default with hashed bag-of-words vectors (hashed-embedding.ts). */
  embedWith(responder: EmbeddingResponder): void;
  script(...steps: ScriptStep[]): void;
  respondWith(responder: Responder): void;
  waitForRequest(count: number): Promise<RecordedRequest>;
  waitForDisconnect(): Promise<RecordedRequest>;
  on(event: ScriptedLlmEvent, listener: (request: RecordedRequest) => void): void;
  close(): Promise<void>;
}

export interface ServerOptions {
  port?: number;
  host?: string;
  /** Length of the default embedding vectors (256). */
  embeddingDimensions?: number;
}

const yieldEvery = 200;

/** Paces and writes the chunks of one streamed reply; every write stops once the client is gone. */
export class ChunkStream {
  private written = 0;

  constructor(
    private readonly response: ServerResponse,
    private readonly delayMs: number,
    private readonly onChunk: () => void,
  ) {}

  get open(): boolean {
    return !this.response.destroyed && !this.response.writableEnded;
  }

  /** Writes one chunk; `data` may be a function so its text is made at the moment of sending. */
  async send(data: string | (() => string)): Promise<boolean> {
    if (this.delayMs > 0) await sleep(this.delayMs);
    else if (++this.written % yieldEvery === 0) await yieldToEventLoop();
    if (!this.open) return false;
    const flushed = this.response.write(typeof data === 'function' ? data() : data);
    this.onChunk();
    if (!flushed) await settled(this.response, ['drain', 'close']);
    return this.open;
  }

  end(data?: string): void {
    if (this.open) this.response.end(data);
  }

  /** Keeps the response open until the connection closes. */
  async hang(): Promise<void> {
    if (this.open) await settled(this.response, ['close']);
  }
}

function settled(response: ServerResponse, events: string[]): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      for (const event of events) response.off(event, done);
      resolve();
    };
    for (const event of events) response.once(event, done);
  });
}

export function splitText(text: string, size: number): string[] {
  if (text === '') return [];
  const pieces: string[] = [];
  for (let start = 0; start < text.length; start += size) pieces.push(text.slice(start, start + size));
  return pieces;
}

export function chunkSizeOf(step: ScriptStep): number {
  return Math.max(1, step.chunkSize ?? 8);
}

/** The content chunks of a step, generated lazily when `chunkText` is given. */
export function contentSource(step: ScriptStep): { count: number; at(index: number): string } {
  if (step.chunkText && step.chunkCount !== undefined) {
    const chunkText = step.chunkText;
    return { count: step.chunkCount, at: (index) => chunkText(index) };
  }
  const chunks = step.chunks ?? splitText(step.content ?? '', chunkSizeOf(step));
  return { count: chunks.length, at: (index) => chunks[index] ?? '' };
}

/**
 * Streams the content chunks of a step, each turned into a chunk of the wire format by `format` at the moment of
 * sending; gives how many content characters went out, or undefined once the client is gone.
 */
export async function sendContent(stream: ChunkStream, step: ScriptStep, format: (piece: string) => string): Promise<number | undefined> {
  const source = contentSource(step);
  let sentLength = 0;
  for (let index = 0; index < source.count; index++) {
    const sent = await stream.send(() => {
      const piece = source.at(index);
      sentLength += piece.length;
      return format(piece);
    });
    if (!sent) return undefined;
  }
  return sentLength;
}

export function fullContent(step: ScriptStep): string {
  const source = contentSource(step);
  let text = '';
  for (let index = 0; index < source.count; index++) text += source.at(index);
  return text;
}

export function estimateTokens(text: string): number {
  return Math.max(1, Math.ceil(text.length / 4));
}

/** The step's usage, or numbers estimated from the prompt and the length of the generated text. */
export function usageOf(
  step: ScriptStep,
  request: RecordedRequest,
  generatedLength: number,
): { promptTokens: number; completionTokens: number } {
  if (step.usage) return step.usage;
  const prompt = JSON.stringify(request.body?.messages ?? request.body ?? '');
  return { promptTokens: estimateTokens(prompt), completionTokens: Math.max(1, Math.ceil(generatedLength / 4)) };
}

export function argumentText(call: ScriptedToolCall): string {
  return typeof call.arguments === 'string' ? call.arguments : JSON.stringify(call.arguments);
}

export function sendJson(response: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  response.writeHead(status, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(text) });
  response.end(text);
}

export interface ChatExchange {
  request: RecordedRequest;
  index: number;
  step: ScriptStep;
  response: ServerResponse;
  stream: ChunkStream;
}

/** What a backend flavour adds to the shared server: its paths, formats and error body. */
export interface Flavour {
  urlPath: string;
  chatPath: string;
  /** Answers a request other than a chat; true when it did (or will: `incoming` still holds its body). */
  serveOther(method: string, path: string, response: ServerResponse, requests: RecordedRequest[], incoming: IncomingMessage): boolean;
  sendError(response: ServerResponse, status: number, message: string): void;
  reply(exchange: ChatExchange): Promise<void>;
  embedPath: string;
  /** The texts an embedding request body asks for, or an error message when it is malformed. */
  embedInput(body: any): string[] | string;
  sendEmbeddings(response: ServerResponse, request: RecordedRequest, vectors: number[][]): void;
}

function readBody(request: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const parts: Buffer[] = [];
    request.on('data', (part: Buffer) => parts.push(part));
    request.on('end', () => resolve(Buffer.concat(parts).toString('utf8')));
    request.on('error', reject);
    request.on('close', () => {
      if (!request.complete) reject(new Error('client closed the connection while sending its request'));
    });
  });
}

function parseBody(text: string): any {
  try {
    return text === '' ? undefined : JSON.parse(text);
  } catch {
    return text;
  }
}

export async function startScriptedServer(flavour: Flavour, options: ServerOptions = {}): Promise<ScriptedLlm> {
  const events = new EventEmitter().setMaxListeners(0);
  const requests: RecordedRequest[] = [];
  const queue: ScriptStep[] = [];
  let responder: Responder = () => ({ content: 'ok' });
  const embedRequests: RecordedRequest[] = [];
  let embeddingResponder: EmbeddingResponder = (input) => input.map((text) => hashedEmbedding(text, options.embeddingDimensions));
  let closing = false;

  async function handleEmbed(incoming: IncomingMessage, response: ServerResponse, path: string): Promise<void> {
    const body = parseBody(await readBody(incoming));
    const request: RecordedRequest = { path, method: 'POST', headers: { ...incoming.headers }, body, disconnected: false, completed: false };
    embedRequests.push(request);
    response.on('finish', () => {
      request.completed = true;
    });
    const input = flavour.embedInput(body);
    if (typeof input === 'string') return flavour.sendError(response, 400, input);
    const answer = await embeddingResponder(input, request);
    if (response.destroyed) return;
    if (!Array.isArray(answer)) return flavour.sendError(response, answer.status, answer.message);
    flavour.sendEmbeddings(response, request, answer);
  }

  async function handleChat(incoming: IncomingMessage, response: ServerResponse, path: string): Promise<void> {
    const body = parseBody(await readBody(incoming));
    const request: RecordedRequest = {
      path,
      method: incoming.method ?? 'POST',
      headers: { ...incoming.headers },
      body,
      disconnected: false,
      completed: false,
    };
    const index = requests.push(request) - 1;
    let destroyed = false;
    response.on('finish', () => {
      request.completed = true;
    });
    response.on('close', () => {
      events.emit('end', request);
      if (response.writableFinished || destroyed || closing) return;
      request.disconnected = true;
      events.emit('disconnect', request);
    });
    events.emit('request', request);
    const step = queue.shift() ?? responder(request, index);
    if (step.destroy) {
      destroyed = true;
      incoming.socket.destroy();
      return;
    }
    if (step.status !== undefined) {
      flavour.sendError(response, step.status, step.errorMessage ?? `scripted error ${step.status}`);
      return;
    }
    const stream = new ChunkStream(response, step.delayMs ?? 0, () => events.emit('chunk', request));
    if (step.silent) return stream.hang();
    await flavour.reply({ request, index, step, response, stream });
  }

  const server = createServer((incoming, response) => {
    const path = new URL(incoming.url ?? '/', 'http://localhost').pathname;
    const method = incoming.method ?? 'GET';
    if (method === 'POST' && path === flavour.embedPath) {
      handleEmbed(incoming, response, path).catch((error: unknown) => {
        if (!response.headersSent) flavour.sendError(response, 500, String(error));
        else response.destroy();
      });
      return;
    }
    if (method !== 'POST' || path !== flavour.chatPath) {
      if (!flavour.serveOther(method, path, response, requests, incoming)) {
        flavour.sendError(response, 404, `${method} ${path} not found`);
      }
      return;
    }
    handleChat(incoming, response, path).catch((error: unknown) => {
      if (response.destroyed) return;
      if (!response.headersSent) flavour.sendError(response, 500, String(error));
      else response.destroy();
    });
  });

  const host = options.host ?? '127.0.0.1';
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://${host}:${port}${flavour.urlPath}`,
    requests,
    embedRequests,
    embedWith: (next) => void (embeddingResponder = next),
    script: (...steps) => void queue.push(...steps),
    respondWith: (next) => void (responder = next),
    waitForRequest: (count) =>
      new Promise((resolve) => {
        const check = (): void => {
          const request = requests[count - 1];
          if (!request) return;
          events.off('request', check);
          resolve(request);
        };
        events.on('request', check);
        check();
      }),
    waitForDisconnect: () => {
      const already = requests.find((request) => request.disconnected);
      if (already) return Promise.resolve(already);
      return new Promise((resolve) => events.once('disconnect', resolve));
    },
    on: (event, listener) => void events.on(event, listener),
    close: async () => {
      closing = true;
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      await closed;
    },
  };
}
