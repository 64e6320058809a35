import { EventEmitter } from 'node:events';
import { messageOf, toolFailure } from '../../failure.ts';
import type { ToolResult } from '../tool.ts';
import type { HostEnd, HostTransport } from './host-transport.ts';
import type { HostToServer, KvOperation, LoadFailure, ModuleToLoad, ServerToHost, ToolManifestEntry } from './protocol.ts';

export type KvHandler = (tool: string, operation: KvOperation) => Promise<unknown>;

export interface HostOptions {
  modules: ModuleToLoad[];
  kv: KvHandler;
  /** How long importing one module may take before it is given up (and the host with it). */
  loadTimeoutMs: number;
  /** Aborting it ends a host that is still loading (the server is shutting down); nothing is blamed on a module. */
  signal?: AbortSignal;
  /** A transport, not started yet, to a new host that will load `modules`: a HostProcess, or an in-memory pair in tests. */
  connect: (modules: ModuleToLoad[]) => HostTransport;
}

export interface CallOptions {
  sessionId: string;
  signal: AbortSignal;
  timeoutMs: number;
}

interface PendingCall {
  name: string;
  settle: (result: ToolResult) => void;
}

/** How long a stopped tool may take to return before its host is ended. */
export const stopGraceMs = 500;

/**
 * One user-tool host: a process (reached through a HostTransport) that loaded a fixed set of
 * tool modules. Ending it frees them all. Emits 'ended' with a reason when it stops
 * unasked (crash, out of memory) or is ended because a tool would not stop.
 */
export class UserToolHost extends EventEmitter<{ ended: [reason: string] }> {
  private readonly pending = new Map<number, PendingCall>();
  private nextCallId = 1;
  private endReason: string | undefined;
  private whenIdle: (() => void) | undefined;
  private readonly toolNames: Set<string>;
  /** When it was started (performance.now()), and when it last started or finished a call (Date.now()). */
  readonly startedAt = performance.now();
  lastActive = Date.now();

  private constructor(
    private readonly transport: HostTransport,
    readonly tools: ToolManifestEntry[],
    /** Every module that did not load, and why. */
    readonly errors: LoadFailure[],
    /**
     * The part of `errors` that is the module's own doing: it threw, is not a tool, hung or
     * crashed the host while it was being imported. A host that could not start at all, or was
     * stopped while loading, blames no module.
     */
    readonly moduleFailures: LoadFailure[],
    kv: KvHandler,
  ) {
    super();
    this.toolNames = new Set(tools.map((tool) => tool.name));
    transport.onmessage = (message) => this.receive(message, kv);
    transport.onclose = (end) => this.end(end);
    // It may have gone between reporting its manifest and now.
    if (transport.ended !== undefined) this.end(transport.ended);
  }

  /**
   * Starts a host for the modules. A module that hangs (past `loadTimeoutMs`) or crashes the
   * host while loading is reported and left out, and the others are loaded again without it.
   */
  static async start(options: HostOptions): Promise<UserToolHost> {
    let modules = options.modules;
    const casualties: LoadFailure[] = [];
    for (;;) {
      const transport = options.connect(modules);
      await transport.start();
      const manifest = await waitForManifest(transport, options.loadTimeoutMs, options.signal);
      if (manifest.ok) {
        const errors = [...casualties, ...manifest.errors];
        return new UserToolHost(transport, manifest.tools, errors, errors, options.kv);
      }
      await transport.close();
      const culprit = manifest.loadingFile;
      if (culprit === undefined || manifest.stopped) {
        const errors = [...casualties, ...modules.map((module) => ({ file: module.file, message: manifest.message }))];
        return new UserToolHost(transport, [], errors, casualties, options.kv).markEnded(manifest.message);
      }
      casualties.push({ file: culprit, message: `Failed while loading: ${manifest.message}.` });
      modules = modules.filter((module) => module.file !== culprit);
    }
  }

  get inFlight(): number {
    return this.pending.size;
  }

  get ended(): boolean {
    return this.endReason !== undefined;
  }

  /** The operating system's id of the host process. */
  get pid(): number | undefined {
    return this.transport.pid;
  }

  /** The last few kilobytes the host wrote to stderr. */
  get stderr(): string {
    return this.transport.stderr;
  }

  call(name: string, args: Record<string, unknown>, options: CallOptions): Promise<ToolResult> {
    if (this.endReason !== undefined) return Promise.resolve(toolFailure(`The tool host is not running (${this.endReason}); try again.`));
    const callId = this.nextCallId++;
    this.lastActive = Date.now();
    return new Promise<ToolResult>((resolve) => {
      let stopTimer: NodeJS.Timeout | undefined;
      const timeout = setTimeout(() => {
        settle(toolFailure(`Error: ${name} timed out after ${options.timeoutMs / 1000} s and was ended with its host.`));
        void this.terminate(`${name} timed out`);
      }, options.timeoutMs);
      const onAbort = () => {
        this.post({ type: 'abort', callId });
        stopTimer = setTimeout(() => {
          settle(toolFailure(`Stopped by the user; ${name} did not stop by itself and was ended with its host.`));
          void this.terminate(`${name} ignored a stop`);
        }, stopGraceMs);
      };
      const settle = (result: ToolResult) => {
        if (!this.pending.delete(callId)) return;
        clearTimeout(timeout);
        clearTimeout(stopTimer);
        options.signal.removeEventListener('abort', onAbort);
        this.lastActive = Date.now();
        resolve(result);
        if (this.pending.size === 0) this.whenIdle?.();
      };
      this.pending.set(callId, { name, settle });
      options.signal.addEventListener('abort', onAbort, { once: true });
      this.post({ type: 'call', callId, name, args, sessionId: options.sessionId });
      if (options.signal.aborted) onAbort();
    });
  }

  /** Ends the host at once; calls still running get a failure naming the reason. */
  async terminate(reason = 'the tool host was replaced'): Promise<void> {
    this.end({ reason });
    await this.transport.close();
  }

  /** Lets running calls finish (up to `maxWaitMs`), then ends the host. */
  async retire(maxWaitMs: number): Promise<void> {
    if (this.pending.size > 0 && !this.ended) {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([
        new Promise<void>((resolve) => (this.whenIdle = resolve)),
        new Promise<void>((resolve) => (timer = setTimeout(resolve, maxWaitMs))),
      ]);
      clearTimeout(timer);
    }
    await this.terminate('the tool host was replaced by a reload');
  }

  private markEnded(reason: string): this {
    this.endReason = reason;
    return this;
  }

  private end(end: HostEnd): void {
    if (this.endReason !== undefined) return;
    this.endReason = end.reason;
    const calls = [...this.pending.values()];
    for (const { name, settle } of calls) {
      settle(
        toolFailure(
          end.memory && calls.length === 1
            ? `Error: ${name} used more than ${end.memory.limitMb} MB of memory (USER_TOOL_MAX_RSS_MB) and was ended with its host.`
            : `Error: ${name} did not finish: ${end.reason}.`,
        ),
      );
    }
    this.emit('ended', end.reason);
    void this.transport.close();
  }

  private post(message: ServerToHost): void {
    if (this.endReason === undefined) this.transport.send(message);
  }

  private receive(message: HostToServer, kv: KvHandler): void {
    switch (message.type) {
      case 'result': {
        const { callId, output, success, metadata } = message;
        const result: ToolResult = { output: String(output), success: success === true };
        if (typeof metadata === 'object' && metadata !== null && !Array.isArray(metadata)) result.metadata = metadata;
        this.pending.get(callId)?.settle(result);
        return;
      }
      case 'kv': {
        const { requestId } = message;
        const operation = kvOperationOf(message as unknown as Record<string, unknown>);
        // Only the tools this host loaded have a store here; anything else is a forged request.
        const refusal = !this.toolNames.has(message.tool) ? `no tool ${String(message.tool)} runs in this host` : operation === undefined ? 'malformed request' : undefined;
        const work = refusal === undefined ? kv(message.tool, operation!) : Promise.reject(new Error(`ctx.kv: ${refusal}`));
        work.then(
          (value) => this.post({ type: 'kv_result', requestId, ok: true, value }),
          (error: unknown) => this.post({ type: 'kv_result', requestId, ok: false, message: messageOf(error) }),
        );
        return;
      }
      case 'manifest':
      case 'loading':
      case 'crash':
      case 'memory':
        return;
    }
  }
}

/** The operation of a kv message, checked field by field: the message comes from code the server does not trust. */
function kvOperationOf(message: Record<string, unknown>): KvOperation | undefined {
  const { operation, key, prefix, value } = message;
  if (operation === 'list') return prefix === undefined ? { operation } : typeof prefix === 'string' ? { operation, prefix } : undefined;
  if (typeof key !== 'string') return undefined;
  if (operation === 'get' || operation === 'delete') return { operation, key };
  if (operation === 'set') return { operation, key, value };
  return undefined;
}

type ManifestOutcome =
  | { ok: true; tools: ToolManifestEntry[]; errors: LoadFailure[] }
  /** `loadingFile`: the module being imported when it failed; `stopped`: the signal ended it. */
  | { ok: false; message: string; loadingFile?: string; stopped?: boolean };

/**
 * Waits for the host's manifest. Each module has `timeoutMs` to import (the clock starts again
 * at each one), so a slow but healthy set of tools is not blamed on whichever came last.
 */
function waitForManifest(transport: HostTransport, timeoutMs: number, signal: AbortSignal | undefined): Promise<ManifestOutcome> {
  return new Promise((resolve) => {
    let loadingFile: string | undefined;
    let timer: NodeJS.Timeout | undefined;
    const fail = (message: string) => finish({ ok: false, message, ...(loadingFile !== undefined && { loadingFile }) });
    const startClock = () => {
      clearTimeout(timer);
      timer = setTimeout(() => fail(`loading did not finish within ${timeoutMs / 1000} s (an endless loop at the top level?)`), timeoutMs);
    };
    const onMessage = (message: HostToServer) => {
      if (message.type === 'loading') {
        loadingFile = message.file;
        startClock();
      }
      if (message.type === 'manifest') finish({ ok: true, tools: message.tools, errors: message.errors });
    };
    const onAbort = () => finish({ ok: false, message: 'the server is shutting down', stopped: true });
    function finish(outcome: ManifestOutcome) {
      clearTimeout(timer);
      transport.onmessage = undefined;
      transport.onclose = undefined;
      signal?.removeEventListener('abort', onAbort);
      resolve(outcome);
    }
    startClock();
    transport.onmessage = onMessage;
    transport.onclose = (end) => fail(end.reason);
    signal?.addEventListener('abort', onAbort, { once: true });
    if (signal?.aborted) onAbort();
    // It may have ended while it was being started.
    else if (transport.ended !== undefined) fail(transport.ended.reason);
  });
}
