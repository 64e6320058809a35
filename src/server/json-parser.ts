import { Worker } from 'node:worker_threads';
import secureJson from 'secure-json-parse';
import { packagePath } from '../package-root.ts';

/** JSON up to this size is parsed in place; larger JSON (a message with images) in a worker thread. */
const inlineLimitBytes = 256 * 1024;

export type JsonParse = { ok: true; value: unknown } | { ok: false; message: string };

/**
 * Parses JSON bodies and frames without blocking the event loop on large ones: decoding
 * and parsing a 13 MB message takes 50–100 ms, during which no other session would be
 * served. One worker thread, started on first need, takes them in turn.
 */
export class JsonParser {
  private worker: Worker | undefined;
  private readonly waiting = new Map<number, (result: JsonParse) => void>();
  private nextId = 0;

  parse(bytes: Uint8Array): Promise<JsonParse> | JsonParse {
    if (bytes.byteLength <= inlineLimitBytes) return parseInPlace(bytes);
    const id = this.nextId++;
    // A copy unless the bytes own their buffer (Buffer#slice would be a view, not a copy).
    const owned = ownsWholeBuffer(bytes) ? bytes : new Uint8Array(bytes);
    return new Promise((resolve) => {
      this.waiting.set(id, resolve);
      this.started().postMessage({ id, bytes: owned }, [owned.buffer as ArrayBuffer]);
    });
  }

  async close(): Promise<void> {
    await this.worker?.terminate();
    this.worker = undefined;
  }

  private started(): Worker {
    if (this.worker) return this.worker;
    // Plain JavaScript, without the parent's loaders (`--import tsx`): the worker starts in milliseconds.
    const worker = new Worker(packagePath('src', 'server', 'json-parse-worker.mjs'), { execArgv: [] });
    worker.unref();
    worker.on('message', ({ id, ...result }: { id: number } & JsonParse) => {
      this.waiting.get(id)?.(result);
      this.waiting.delete(id);
    });
    worker.on('error', (error) => this.failAll(`The JSON parser failed: ${error.message}`));
    worker.on('exit', () => {
      if (this.worker === worker) this.worker = undefined;
      this.failAll('The JSON parser stopped.');
    });
    this.worker = worker;
    return worker;
  }

  private failAll(message: string): void {
    for (const resolve of this.waiting.values()) resolve({ ok: false, message });
    this.waiting.clear();
  }
}

function parseInPlace(bytes: Uint8Array): JsonParse {
  try {
    const text = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8');
    return { ok: true, value: secureJson.parse(text, { protoAction: 'error', constructorAction: 'error' }) };
  } catch (error) {
    return { ok: false, message: (error as Error).message };
  }
}

/** Whether the bytes are their whole ArrayBuffer, which can then be handed to the worker without a copy. */
function ownsWholeBuffer(bytes: Uint8Array): boolean {
  return bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength && !(bytes.buffer instanceof SharedArrayBuffer);
}
