// A user-tool host in memory: the server's end is a HostTransport, the test plays the host's
// part. Messages cross on a later turn of the event loop, in order, as over the real pipe.
import type { HostEnd, HostTransport } from '../../src/tools/user-tools/host-transport.ts';
import type { HostToServer, ModuleToLoad, ServerToHost, ToolManifestEntry } from '../../src/tools/user-tools/protocol.ts';

type Sent<Type extends ServerToHost['type']> = Extract<ServerToHost, { type: Type }>;

/** The server's end of an in-memory host. */
class InMemoryTransport implements HostTransport {
  onmessage?: (message: HostToServer) => void;
  onclose?: (end: HostEnd) => void;
  ended: HostEnd | undefined;

  constructor(
    private readonly host: InMemoryHost,
    readonly pid: number | undefined,
    readonly stderr: string,
  ) {}

  async start(): Promise<void> {
    this.host.started = true;
    this.send({ type: 'load', modules: this.host.modules });
  }

  send(message: ServerToHost): void {
    if (this.ended === undefined) this.host.receive(message);
  }

  async close(): Promise<void> {
    this.host.closed = true;
    this.host.exit({ reason: 'the tool host exited (signal SIGKILL)' });
    await new Promise((resolve) => setImmediate(resolve));
  }
}

export class InMemoryHost {
  /** Everything the server sent, in order. */
  readonly received: ServerToHost[] = [];
  /** How the host answers each message the server sends; nothing when absent. */
  answer: ((message: ServerToHost) => void) | undefined;
  readonly transport: InMemoryTransport;
  started = false;
  /** The server ended the host (close). */
  closed = false;
  private readonly waiting: { type: ServerToHost['type']; index: number; resolve: (message: ServerToHost) => void }[] = [];
  private readonly givenCounts = new Map<string, number>();

  constructor(
    /** The modules the server asked this host to load. */
    readonly modules: ModuleToLoad[],
    options: { pid?: number; stderr?: string } = {},
  ) {
    this.transport = new InMemoryTransport(this, options.pid, options.stderr ?? '');
  }

  /** A message from the server arrives. */
  receive(message: ServerToHost): void {
    this.received.push(message);
    const index = this.ofType(message.type).length - 1;
    const waiter = this.waiting.find((waiting) => waiting.type === message.type && waiting.index === index);
    if (waiter) {
      this.waiting.splice(this.waiting.indexOf(waiter), 1);
      waiter.resolve(message);
    }
    this.answer?.(message);
  }

  /** Each message of `type` the server sent, one per call, in order: waits for the next one not given yet. */
  next<Type extends ServerToHost['type']>(type: Type): Promise<Sent<Type>> {
    const index = this.givenCounts.get(type) ?? 0;
    this.givenCounts.set(type, index + 1);
    const sent = this.ofType(type)[index];
    if (sent !== undefined) return Promise.resolve(sent);
    return new Promise((resolve) => this.waiting.push({ type, index, resolve: (message) => resolve(message as Sent<Type>) }));
  }

  ofType<Type extends ServerToHost['type']>(type: Type): Sent<Type>[] {
    return this.received.filter((message): message is Sent<Type> => message.type === type);
  }

  /** The host sends a message. */
  send(message: HostToServer): void {
    setImmediate(() => {
      if (this.transport.ended === undefined) this.transport.onmessage?.(message);
    });
  }

  /** The host goes away (exits, crashes, is ended for its memory). */
  exit(end: HostEnd): void {
    setImmediate(() => {
      if (this.transport.ended !== undefined) return;
      this.transport.ended = end;
      this.transport.onclose?.(end);
    });
  }
}

/** Answers a load with the manifest of every module asked for (each a tool of its expected name). */
export function loadsEverything(host: InMemoryHost): void {
  host.answer = (message) => {
    if (message.type === 'load') host.send({ type: 'manifest', tools: message.modules.map(manifestEntryOf), errors: [] });
  };
}

export function moduleNamed(name: string): ModuleToLoad {
  return { file: `/tools/${name}.ts`, modulePath: `/build/${name}.mjs`, expectedName: name };
}

export function manifestEntryOf(module: ModuleToLoad): ToolManifestEntry {
  return { name: module.expectedName, description: `Test tool ${module.expectedName}.`, parameters: { type: 'object' }, file: module.file, permissions: [] };
}
