// The model side of the Ollama stand-in (scripted-ollama.ts with `library`): /api/tags, /api/show,
// /api/ps, /api/delete, /api/pull and an empty /api/generate, in the shapes Ollama's API documents.
// A pull streams NDJSON progress ("pulling manifest", a line per step of each layer, "verifying
// sha256 digest", "writing manifest", "success") at a pace the test sets, and can be held mid-way,
// fail mid-way, fail its digest check, or be cancelled by the client going away.
import { EventEmitter } from 'node:events';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';

export interface LibraryModel {
  name: string;
  family?: string;
  parameterSize?: string;
  quantization?: string;
  contextLength?: number;
  /** Ollama's capabilities list; absent for an Ollama too old to say. */
  capabilities?: string[];
  /** Each layer's size in bytes (the first is the weights); digests are made from the name. */
  layers: number[];
}

export interface PullPlan {
  /** Progress lines per layer. */
  steps?: number;
  /** Between two lines. */
  intervalMs?: number;
  /** After this many lines the pull waits for `release(name)` (or the client leaving). */
  holdAfter?: number;
  /** After this many lines, an `{error}` line with this message ends the pull. */
  failAfter?: { lines: number; error: string };
  /** The digest check fails. */
  digestMismatch?: boolean;
}

/** What the stand-in did, for tests and the bench to wait on. */
export interface LibraryEvents {
  /** A pull line went out: its text, with the time it was written (performance.timeOrigin + now). */
  line: [name: string, line: Record<string, unknown>, sentAt: number];
  held: [name: string];
  /** A pull's response closed: `disconnected` when the client went away before its end. */
  closed: [name: string, disconnected: boolean];
  loaded: [name: string];
}

const manifestMissing = 'pull model manifest: file does not exist';

export function digestOf(name: string, layer: number): string {
  let hash = 2166136261;
  for (const character of `${name}#${layer}`) hash = Math.imul(hash ^ character.charCodeAt(0), 16777619) >>> 0;
  return `sha256:${hash.toString(16).padStart(8, '0').repeat(8)}`;
}

const sizeOf = (model: LibraryModel) => model.layers.reduce((sum, layer) => sum + layer, 0);

export class OllamaModelLibrary extends EventEmitter<LibraryEvents> {
  /** The registry: what a pull can find. */
  private readonly registry = new Map<string, LibraryModel>();
  private readonly installed = new Map<string, LibraryModel>();
  private readonly running = new Map<string, { expiresAt: string; sizeVram: number }>();
  private readonly plans = new Map<string, PullPlan>();
  private readonly releases = new Map<string, () => void>();
  /** Every request to the model endpoints, in order: `METHOD /api/path model`. */
  readonly calls: string[] = [];

  constructor(options: { registry?: LibraryModel[]; installed?: LibraryModel[] } = {}) {
    super();
    this.setMaxListeners(0);
    for (const model of options.registry ?? []) this.registry.set(model.name, model);
    for (const model of options.installed ?? []) {
      this.registry.set(model.name, model);
      this.installed.set(model.name, model);
    }
  }

  /** Puts a model in the registry, for a pull to find. */
  add(model: LibraryModel): void {
    this.registry.set(model.name, model);
  }

  plan(name: string, plan: PullPlan): void {
    this.plans.set(name, plan);
  }

  /** Lets a held pull go on. */
  release(name: string): void {
    this.releases.get(name)?.();
  }

  /** Marks a model as in memory, as /api/ps reports it. */
  load(name: string, sizeVram = 0, expiresAt = new Date(Date.now() + 5 * 60_000).toISOString()): void {
    this.running.set(name, { expiresAt, sizeVram });
  }

  has(name: string): boolean {
    return this.installed.has(name);
  }

  /** Whether it handled the request. */
  serve(method: string, path: string, incoming: IncomingMessage, response: ServerResponse): boolean {
    const route = `${method} ${path}`;
    if (route === 'GET /api/tags') {
      this.calls.push(route);
      sendJson(response, 200, { models: [...this.installed.values()].map((model) => this.tagOf(model)) });
      return true;
    }
    if (route === 'GET /api/ps') {
      this.calls.push(route);
      const models = [...this.running].flatMap(([name, running]) => {
        const model = this.installed.get(name);
        return model ? [{ ...this.tagOf(model), expires_at: running.expiresAt, size_vram: running.sizeVram }] : [];
      });
      sendJson(response, 200, { models });
      return true;
    }
    const handlers: Record<string, (body: Record<string, unknown>, name: string) => void | Promise<void>> = {
      'POST /api/show': (_body, name) => this.show(name, response),
      'DELETE /api/delete': (_body, name) => this.remove(name, response),
      'POST /api/pull': (body, name) => this.pull(name, body, response),
      'POST /api/generate': (body, name) => this.generate(name, body, response),
    };
    const handler = handlers[route];
    if (!handler) return false;
    readJson(incoming)
      .then(async (body) => {
        const name = String(body['model'] ?? body['name'] ?? '');
        this.calls.push(`${route} ${name}`);
        await handler(body, name);
      })
      .catch((error: unknown) => {
        if (!response.headersSent) sendJson(response, 500, { error: String(error) });
        else response.destroy();
      });
    return true;
  }

  private tagOf(model: LibraryModel) {
    return {
      name: model.name,
      model: model.name,
      modified_at: new Date(0).toISOString(),
      size: sizeOf(model),
      digest: digestOf(model.name, -1).slice('sha256:'.length),
      details: this.detailsOf(model),
    };
  }

  private detailsOf(model: LibraryModel) {
    return {
      parent_model: '',
      format: 'gguf',
      family: model.family ?? 'llama',
      families: [model.family ?? 'llama'],
      parameter_size: model.parameterSize ?? '1B',
      quantization_level: model.quantization ?? 'Q4_K_M',
    };
  }

  private show(name: string, response: ServerResponse): void {
    const model = this.installed.get(name);
    if (!model) return sendJson(response, 404, { error: `model '${name}' not found` });
    const architecture = model.family ?? 'llama';
    sendJson(response, 200, {
      license: '',
      modelfile: `FROM ${name}`,
      parameters: '',
      template: '{{ .Prompt }}',
      details: this.detailsOf(model),
      model_info: { 'general.architecture': architecture, 'general.parameter_count': 1_000_000_000, [`${architecture}.context_length`]: model.contextLength ?? 8192 },
      ...(model.capabilities && { capabilities: model.capabilities }),
      modified_at: new Date(0).toISOString(),
    });
  }

  private remove(name: string, response: ServerResponse): void {
    if (!this.installed.delete(name)) return sendJson(response, 404, { error: `model '${name}' not found` });
    this.running.delete(name);
    response.writeHead(200).end();
  }

  private async generate(name: string, body: Record<string, unknown>, response: ServerResponse): Promise<void> {
    if (!this.installed.has(name)) return sendJson(response, 404, { error: `model '${name}' not found, try pulling it first` });
    if (body['prompt'] !== '' && body['prompt'] !== undefined) return sendJson(response, 400, { error: 'the stand-in only loads models' });
    this.load(name);
    this.emit('loaded', name);
    sendJson(response, 200, { model: name, created_at: new Date().toISOString(), response: '', done: true, done_reason: 'load' });
  }

  private async pull(name: string, body: Record<string, unknown>, response: ServerResponse): Promise<void> {
    const plan = this.plans.get(name) ?? {};
    const model = this.registry.get(name);
    response.writeHead(200, { 'Content-Type': 'application/x-ndjson' });
    response.flushHeaders();
    let finished = false;
    response.on('close', () => this.emit('closed', name, !finished));
    let sent = 0;
    const send = async (line: Record<string, unknown>): Promise<boolean> => {
      if (sent > 0 && plan.intervalMs) await sleep(plan.intervalMs);
      if (response.destroyed) return false;
      if (plan.failAfter && sent === plan.failAfter.lines) {
        finished = true;
        response.end(`${JSON.stringify({ error: plan.failAfter.error })}\n`);
        return false;
      }
      response.write(`${JSON.stringify(line)}\n`);
      this.emit('line', name, line, performance.timeOrigin + performance.now());
      sent += 1;
      if (plan.holdAfter === sent) {
        const released = new Promise<void>((resolve) => {
          this.releases.set(name, resolve);
          response.once('close', resolve);
        });
        this.emit('held', name);
        await released;
        this.releases.delete(name);
      }
      return !response.destroyed;
    };
    if (body['stream'] === false) return sendJson(response, 400, { error: 'the stand-in streams pulls only' });
    if (!(await send({ status: 'pulling manifest' }))) return;
    if (!model) {
      finished = true;
      return void response.end(`${JSON.stringify({ error: manifestMissing })}\n`);
    }
    const steps = plan.steps ?? 4;
    for (const [index, size] of model.layers.entries()) {
      const digest = digestOf(name, index);
      for (let step = 0; step <= steps; step += 1) {
        const line = { status: `pulling ${digest.slice('sha256:'.length, 'sha256:'.length + 12)}`, digest, total: size, completed: Math.round((size * step) / steps) };
        if (!(await send(line))) return;
      }
    }
    if (!(await send({ status: 'verifying sha256 digest' }))) return;
    if (plan.digestMismatch) {
      finished = true;
      const want = digestOf(name, 0);
      return void response.end(`${JSON.stringify({ error: `digest mismatch, file must be downloaded again: want ${want}, got sha256:${'0'.repeat(64)}` })}\n`);
    }
    if (!(await send({ status: 'writing manifest' }))) return;
    this.installed.set(name, model);
    finished = true;
    if (!(await send({ status: 'success' }))) return;
    response.end();
  }
}

function sendJson(response: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  response.writeHead(status, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(text) });
  response.end(text);
}

function readJson(incoming: IncomingMessage): Promise<Record<string, unknown>> {
  return new Promise((resolve, reject) => {
    const parts: Buffer[] = [];
    incoming.on('data', (part: Buffer) => parts.push(part));
    incoming.on('end', () => {
      const text = Buffer.concat(parts).toString('utf8');
      try {
        const parsed: unknown = text === '' ? {} : JSON.parse(text);
        resolve(typeof parsed === 'object' && parsed !== null ? (parsed as Record<string, unknown>) : {});
      } catch (error) {
        reject(error);
      }
    });
    incoming.on('error', reject);
  });
}
