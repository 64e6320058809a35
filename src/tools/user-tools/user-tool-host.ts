import { EventEmitter } from 'node:events';
import { Worker, type ResourceLimits } from 'node:worker_threads';
import type { ToolResult } from '../tool.ts';
import type { HostToServer, KvOperation, LoadFailure, ModuleToLoad, ServerToHost, ToolManifestEntry } from './protocol.ts';

export type KvHandler = (tool: string, operation: KvOperation) => Promise<unknown>;

export interface HostOptions {
  modules: ModuleToLoad[];
  resourceLimits: ResourceLimits;
  kv: KvHandler;
  /** How long loading every module may take before the host is given up. */
  loadTimeoutMs: number;
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

const workerUrl = new URL('./host-worker.js', import.meta.url);

/**
 * One generation of the user-tool host: a worker thread that loaded a fixed set of tool
 * modules. Ending it frees them all. Emits 'ended' with a reason when it stops unasked
 * (crash, out of memory) or is ended because a tool would not stop.
 */
export class UserToolHost extends EventEmitter<{ ended: [reason: string] }> {
  private readonly pending = new Map<number, PendingCall>();
  private nextCallId = 1;
  private endReason: string | undefined;
  private whenIdle: (() => void) | undefined;

  private constructor(
    private readonly worker: Worker,
    readonly tools: ToolManifestEntry[],
    readonly errors: LoadFailure[],
  ) {
    super();
  }

  /**
   * Starts a host for the modules. A module that hangs or crashes the worker while
   * loading is reported and left out, and the others are loaded again without it.
   */
  static async start(options: HostOptions): Promise<UserToolHost> {
    let modules = options.modules;
    const casualties: LoadFailure[] = [];
    for (;;) {
      const worker = new Worker(workerUrl, {
        workerData: { modules },
        // No TypeScript loader in the worker: it imports bundled JavaScript only.
        execArgv: [],
        resourceLimits: options.resourceLimits,
        stdout: false,
        stderr: false,
      });
      const manifest = await waitForManifest(worker, options.loadTimeoutMs);
      if (manifest.ok) {
        const host = new UserToolHost(worker, manifest.tools, [...casualties, ...manifest.errors]);
        worker.on('message', (message: HostToServer) => host.receive(message, options.kv));
        worker.on('error', (error) => host.end(describeWorkerError(error, options.resourceLimits)));
        worker.on('exit', (code) => host.end(`the tool host exited (code ${code})`));
        return host;
      }
      await worker.terminate();
      const culprit = manifest.loadingFile;
      if (culprit === undefined) {
        const errors = [...casualties, ...modules.map((module) => ({ file: module.file, message: manifest.message }))];
        return new UserToolHost(worker, [], errors).markEnded(manifest.message);
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

  call(name: string, args: Record<string, unknown>, options: CallOptions): Promise<ToolResult> {
    if (this.endReason !== undefined) return Promise.resolve(failure(`The tool host is not running (${this.endReason}); try again.`));
    const callId = this.nextCallId++;
    return new Promise<ToolResult>((resolve) => {
      let stopTimer: NodeJS.Timeout | undefined;
      const timeout = setTimeout(() => {
        settle(failure(`Error: ${name} timed out after ${options.timeoutMs / 1000} s and was ended with its host.`));
        void this.terminate(`${name} timed out`);
      }, options.timeoutMs);
      const onAbort = () => {
        this.post({ type: 'abort', callId });
        stopTimer = setTimeout(() => {
          settle(failure(`Stopped by the user; ${name} did not stop by itself and was ended with its host.`));
          void this.terminate(`${name} ignored a stop`);
        }, stopGraceMs);
      };
      const settle = (result: ToolResult) => {
        if (!this.pending.delete(callId)) return;
        clearTimeout(timeout);
        clearTimeout(stopTimer);
        options.signal.removeEventListener('abort', onAbort);
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
    this.end(reason);
    await this.worker.terminate();
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

  private end(reason: string): void {
    if (this.endReason !== undefined) return;
    this.endReason = reason;
    for (const { name, settle } of [...this.pending.values()]) settle(failure(`Error: ${name} did not finish: ${reason}.`));
    this.emit('ended', reason);
  }

  private post(message: ServerToHost): void {
    if (this.endReason === undefined) this.worker.postMessage(message);
  }

  private receive(message: HostToServer, kv: KvHandler): void {
    switch (message.type) {
      case 'result': {
        const { callId, type: _type, ...result } = message;
        this.pending.get(callId)?.settle(result);
        return;
      }
      case 'kv': {
        const { requestId, tool, type: _type, ...operation } = message;
        kv(tool, operation as KvOperation).then(
          (value) => this.post({ type: 'kv_result', requestId, ok: true, value }),
          (error: unknown) => this.post({ type: 'kv_result', requestId, ok: false, message: error instanceof Error ? error.message : String(error) }),
        );
        return;
      }
      case 'manifest':
      case 'loading':
        return;
    }
  }
}

function failure(output: string): ToolResult {
  return { output, success: false };
}

type ManifestOutcome =
  | { ok: true; tools: ToolManifestEntry[]; errors: LoadFailure[] }
  | { ok: false; message: string; loadingFile?: string };

function waitForManifest(worker: Worker, timeoutMs: number): Promise<ManifestOutcome> {
  return new Promise((resolve) => {
    let loadingFile: string | undefined;
    const fail = (message: string) => finish({ ok: false, message, ...(loadingFile !== undefined && { loadingFile }) });
    const timer = setTimeout(() => fail(`loading did not finish within ${timeoutMs / 1000} s (an endless loop at the top level?)`), timeoutMs);
    const onMessage = (message: HostToServer) => {
      if (message.type === 'loading') loadingFile = message.file;
      if (message.type === 'manifest') finish({ ok: true, tools: message.tools, errors: message.errors });
    };
    const onError = (error: Error & { code?: string }) =>
      fail(error.code === 'ERR_WORKER_OUT_OF_MEMORY' ? 'it ran out of memory' : `the tool host failed: ${error.message}`);
    const onExit = (code: number) => fail(`the tool host exited (code ${code})`);
    function finish(outcome: ManifestOutcome) {
      clearTimeout(timer);
      worker.off('message', onMessage).off('error', onError).off('exit', onExit);
      resolve(outcome);
    }
    worker.on('message', onMessage).on('error', onError).on('exit', onExit);
  });
}

function describeWorkerError(error: Error & { code?: string }, limits: ResourceLimits): string {
  if (error.code === 'ERR_WORKER_OUT_OF_MEMORY') return `a tool ran out of memory (the host's limit is ${limits.maxOldGenerationSizeMb ?? '?'} MB)`;
  return `the tool host crashed: ${error.message}`;
}
