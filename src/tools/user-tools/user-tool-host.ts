import { spawn, type ChildProcess } from 'node:child_process';
import { EventEmitter } from 'node:events';
import { getPriority, setPriority, tmpdir } from 'node:os';
import path from 'node:path';
import type { Duplex } from 'node:stream';
import type { ResourceLimits } from 'node:worker_threads';
import { interpreterFolders } from '../../jail/interpreters.ts';
import type { Jail } from '../../jail/jail.ts';
import { readChildPid } from '../../jail/network-namespace.ts';
import type { ToolResult } from '../tool.ts';
import { toolEnvironment } from '../tool-environment.ts';
import type { HostToServer, KvOperation, LoadFailure, ModuleToLoad, ServerToHost, ToolManifestEntry } from './protocol.ts';
import { RssWatch } from './rss-watch.ts';
import { sandboxFlags, type Sandbox } from './sandbox.ts';
import { packagePath } from '../../package-root.ts';
import { messageOf, toolFailure } from '../../failure.ts';

export type KvHandler = (tool: string, operation: KvOperation) => Promise<unknown>;

export interface HostOptions {
  modules: ModuleToLoad[];
  /** The V8 heap limits (old and young generation); the stack size is Node's default. */
  resourceLimits: ResourceLimits;
  kv: KvHandler;
  /** How long importing one module may take before it is given up (and the host with it). */
  loadTimeoutMs: number;
  /** Aborting it ends a host that is still loading (the server is shutting down); nothing is blamed on a module. */
  signal?: AbortSignal;
  /** What the process may touch besides its script and its modules; nothing when absent. */
  sandbox?: Sandbox;
  /** Its whole environment (already scrubbed); toolEnvironment('') when absent. */
  environment?: NodeJS.ProcessEnv;
  /** The process is ended when its resident memory passes this (USER_TOOL_MAX_RSS_MB); 256 when absent. */
  maxRssMb?: number;
  /** The strict jail the host runs in; network only when the tools it hosts were granted `network`. */
  jail?: Jail;
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
/** A message from a host longer than this ends it (the host itself cuts outputs well below). */
const maxMessageBytes = 64 * 1024 * 1024;
/** How much of a host's stderr is kept to explain how it ended. */
const stderrTailBytes = 8 * 1024;
/** Where /proc is missing, how often a host reports its own RSS. */
const memoryReportMs = 100;
/** Hosts run at a lower CPU priority than the server, so a tool that spins or hoards cannot starve it. */
const hostNiceness = 10;

const hostScript = packagePath('src', 'tools', 'user-tools', 'host-process.mjs');

/**
 * Hosts still running. A host leaves when its pipe closes, but one stuck in a loop never reads
 * it: whatever way the server exits, it ends them first (a server killed outright cannot).
 */
const runningHosts = new Set<ChildProcess>();
let endHostsOnExit = false;
function register(child: ChildProcess): void {
  runningHosts.add(child);
  child.once('exit', () => runningHosts.delete(child));
  if (endHostsOnExit) return;
  endHostsOnExit = true;
  process.once('exit', () => {
    for (const host of runningHosts) host.kill('SIGKILL');
  });
}

/** Why a host process went away, once. */
interface Gone {
  reason: string;
  /** It was ended for its resident memory. */
  memory?: { limitMb: number };
}

/**
 * One user-tool host process: the child, its framed pipe (fd 3), its stderr tail and the watch
 * on its resident memory. Emits 'message' for each message and 'gone' once when it stops
 * being usable (exit, crash, a malformed message, too much memory), ending the process.
 */
class HostProcess extends EventEmitter<{ message: [message: HostToServer]; gone: [gone: Gone] }> {
  busy: () => boolean = () => true;
  readonly exited: Promise<void>;
  /** Why it went away, once it has. */
  goneWith: Gone | undefined;
  private crashMessage: string | undefined;
  /** The end of what it wrote to stderr (V8's out-of-memory report, a tool's console.error). */
  stderrTail = '';
  private pendingChunks: Buffer[] = [];
  private pendingBytes = 0;
  private watch: RssWatch | undefined;

  private constructor(
    private readonly child: ChildProcess,
    private readonly channel: Duplex,
    private readonly heapLimitMb: number | undefined,
    private readonly maxRssMb: number,
  ) {
    super();
    this.exited = new Promise((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) resolve();
      child.once('exit', () => resolve());
      child.once('error', () => {
        if (child.pid === undefined) resolve();
      });
    });
    child.on('exit', (code, signal) => this.gone({ reason: this.describeExit(code, signal) }));
    child.on('error', (error) => this.gone({ reason: `the tool host could not run: ${error.message}` }));
    child.stderr?.on('data', (chunk: Buffer) => {
      this.stderrTail = (this.stderrTail + chunk.toString('utf8')).slice(-stderrTailBytes);
    });
    channel.on('data', (chunk: Buffer) => this.receive(chunk));
    channel.on('error', () => undefined);
  }

  /** Watches the resident memory of the process running the tools (inside a jail, not bubblewrap's). */
  private watchMemory(pid: number): void {
    if (this.goneWith !== undefined) return;
    const { maxRssMb } = this;
    this.watch = new RssWatch(pid, maxRssMb * 1024 * 1024, () => this.busy(), (rss) =>
      this.end({
        reason: `the tool host used more than ${maxRssMb} MB of memory (${Math.round(rss / 1024 / 1024)} MB; USER_TOOL_MAX_RSS_MB) and was ended`,
        memory: { limitMb: maxRssMb },
      }),
    );
  }

  static async spawn(options: HostOptions, modules: ModuleToLoad[]): Promise<HostProcess> {
    const sandbox = options.sandbox ?? {};
    const moduleFolders = [...new Set(modules.map((module) => path.dirname(module.modulePath)))];
    const flags = await sandboxFlags(hostScript, moduleFolders, sandbox, options.resourceLimits);
    const environment = options.environment ?? toolEnvironment('');
    const jailed = options.jail?.active
      ? await options.jail.wrap(
          process.execPath,
          [...flags, hostScript],
          {
            kind: 'strict',
            writable: sandbox.workFolder === undefined ? [] : [sandbox.workFolder],
            readable: [hostScript, ...moduleFolders, ...(sandbox.read ?? []), ...interpreterFolders()],
            network: sandbox.permissions?.includes('network') ?? false,
            cwd: sandbox.workFolder ?? '/',
            commandIsInit: true,
            infoFd: 4,
          },
          environment,
        )
      : undefined;
    const child = spawn(jailed?.executable ?? process.execPath, jailed?.args ?? [...flags, hostScript], {
      cwd: sandbox.workFolder ?? tmpdir(),
      env: jailed?.environment ?? environment,
      // stdout goes where the server's goes (a tool's console.log), through a pipe: the host holds no descriptor of a
      // terminal Hearth may run in. The end of stderr is kept to explain a crash; fd 3 is the channel; fd 4, in a jail,
      // is where bubblewrap says which process runs the host.
      stdio: ['ignore', 'pipe', 'pipe', 'pipe', ...(jailed ? (['pipe'] as const) : [])],
      // A session of its own, jailed or not: no controlling terminal, so a tool cannot type into the one Hearth runs in.
      detached: true,
      windowsHide: true,
    });
    child.once('exit', () => jailed?.release());
    child.stdout?.pipe(process.stdout, { end: false });
    const channel = child.stdio[3] as Duplex;
    if (child.pid !== undefined) register(child);
    const host = new HostProcess(child, channel, options.resourceLimits.maxOldGenerationSizeMb, options.maxRssMb ?? 256);
    const hostPid = jailed ? await readChildPid(child, 4).catch(() => undefined) : child.pid;
    if (hostPid !== undefined) {
      try {
        setPriority(hostPid, Math.min(19, getPriority() + hostNiceness));
      } catch {
        // Not permitted here (or the process is gone already): it runs at the server's priority.
      }
      host.watchMemory(hostPid);
    }
    host.send({
      type: 'load',
      modules,
      ...(sandbox.workFolder !== undefined && { workFolder: sandbox.workFolder }),
      ...(host.watch?.available === false && { memoryReportMs }),
    });
    return host;
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  /** Resident memory in bytes (from /proc), when it can be read. */
  rss(): number | undefined {
    return this.watch?.read();
  }

  send(message: ServerToHost): void {
    if (this.goneWith !== undefined || !this.channel.writable) return;
    this.channel.write(`${JSON.stringify(message)}\n`);
  }

  /** A call starts: read its memory now and often. */
  wake(): void {
    this.watch?.wake();
  }

  /** Ends the process (if it still runs) and waits until it has exited. */
  async kill(): Promise<void> {
    this.watch?.stop();
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill('SIGKILL');
    await this.exited;
  }

  /** Reports `gone` and ends the process. */
  end(gone: Gone): void {
    this.gone(gone);
    void this.kill();
  }

  private gone(gone: Gone): void {
    if (this.goneWith !== undefined) return;
    this.goneWith = gone;
    this.watch?.stop();
    this.emit('gone', gone);
  }

  private receive(chunk: Buffer): void {
    let start = 0;
    for (let newline = chunk.indexOf(10); newline !== -1; newline = chunk.indexOf(10, start)) {
      const piece = chunk.subarray(start, newline);
      const line = this.pendingBytes === 0 ? piece.toString('utf8') : Buffer.concat([...this.pendingChunks, piece]).toString('utf8');
      this.pendingChunks = [];
      this.pendingBytes = 0;
      start = newline + 1;
      let message: unknown;
      try {
        message = JSON.parse(line);
      } catch {
        this.end({ reason: 'the tool host sent a message that is not JSON and was ended' });
        return;
      }
      if (typeof message !== 'object' || message === null || typeof (message as { type?: unknown }).type !== 'string') {
        this.end({ reason: 'the tool host sent a malformed message and was ended' });
        return;
      }
      this.handle(message as HostToServer);
      if (this.goneWith !== undefined) return;
    }
    if (start < chunk.length) {
      const rest = chunk.subarray(start);
      this.pendingChunks.push(rest);
      this.pendingBytes += rest.length;
      if (this.pendingBytes > maxMessageBytes) this.end({ reason: `the tool host sent a message over ${maxMessageBytes / 1024 / 1024} MB and was ended` });
    }
  }

  private handle(message: HostToServer): void {
    if (message.type === 'crash') this.crashMessage = String(message.message);
    else if (message.type === 'memory') this.watch?.check(Number(message.rss));
    else this.emit('message', message);
  }

  private describeExit(code: number | null, signal: NodeJS.Signals | null): string {
    if (/heap out of memory|Reached heap limit/i.test(this.stderrTail)) {
      return `a tool ran out of memory (the host's JavaScript heap limit is ${this.heapLimitMb ?? '?'} MB)`;
    }
    if (this.crashMessage !== undefined) return `the tool host crashed: ${this.crashMessage}`;
    const lastLine = this.stderrTail.trim().split('\n').at(-1)?.trim().slice(0, 200);
    return `the tool host exited (${signal ? `signal ${signal}` : `code ${code}`})${lastLine ? `: ${lastLine}` : ''}`;
  }
}

/**
 * One user-tool host: a child process, under Node's permission model, that loaded a fixed
 * set of tool modules. Ending it frees them all. Emits 'ended' with a reason when it stops
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
    private readonly hostProcess: HostProcess,
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
    hostProcess.busy = () => this.pending.size > 0;
    hostProcess.on('message', (message) => this.receive(message, kv));
    hostProcess.on('gone', (gone) => this.end(gone));
    // It may have gone between reporting its manifest and now.
    if (hostProcess.goneWith !== undefined) this.end(hostProcess.goneWith);
  }

  /**
   * Starts a host for the modules. A module that hangs (past `loadTimeoutMs`) or crashes the
   * host while loading is reported and left out, and the others are loaded again without it.
   */
  static async start(options: HostOptions): Promise<UserToolHost> {
    let modules = options.modules;
    const casualties: LoadFailure[] = [];
    for (;;) {
      const hostProcess = await HostProcess.spawn(options, modules);
      const manifest = await waitForManifest(hostProcess, options.loadTimeoutMs, options.signal);
      if (manifest.ok) {
        const errors = [...casualties, ...manifest.errors];
        return new UserToolHost(hostProcess, manifest.tools, errors, errors, options.kv);
      }
      await hostProcess.kill();
      const culprit = manifest.loadingFile;
      if (culprit === undefined || manifest.stopped) {
        const errors = [...casualties, ...modules.map((module) => ({ file: module.file, message: manifest.message }))];
        return new UserToolHost(hostProcess, [], errors, casualties, options.kv).markEnded(manifest.message);
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
    return this.hostProcess.pid;
  }

  /** The host process's resident memory in bytes, where /proc tells it. */
  rss(): number | undefined {
    return this.hostProcess.rss();
  }

  /** The last few kilobytes the host wrote to stderr. */
  get stderr(): string {
    return this.hostProcess.stderrTail;
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
      this.hostProcess.wake();
      if (options.signal.aborted) onAbort();
    });
  }

  /** Ends the host at once; calls still running get a failure naming the reason. */
  async terminate(reason = 'the tool host was replaced'): Promise<void> {
    this.end({ reason });
    await this.hostProcess.kill();
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

  private end(gone: Gone): void {
    if (this.endReason !== undefined) return;
    this.endReason = gone.reason;
    const calls = [...this.pending.values()];
    for (const { name, settle } of calls) {
      settle(
        toolFailure(
          gone.memory && calls.length === 1
            ? `Error: ${name} used more than ${gone.memory.limitMb} MB of memory (USER_TOOL_MAX_RSS_MB) and was ended with its host.`
            : `Error: ${name} did not finish: ${gone.reason}.`,
        ),
      );
    }
    this.emit('ended', gone.reason);
    void this.hostProcess.kill();
  }

  private post(message: ServerToHost): void {
    if (this.endReason === undefined) this.hostProcess.send(message);
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
function waitForManifest(hostProcess: HostProcess, timeoutMs: number, signal: AbortSignal | undefined): Promise<ManifestOutcome> {
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
    const onGone = (gone: Gone) => fail(gone.reason);
    const onAbort = () => finish({ ok: false, message: 'the server is shutting down', stopped: true });
    function finish(outcome: ManifestOutcome) {
      clearTimeout(timer);
      hostProcess.off('message', onMessage).off('gone', onGone);
      signal?.removeEventListener('abort', onAbort);
      resolve(outcome);
    }
    startClock();
    hostProcess.on('message', onMessage).on('gone', onGone);
    signal?.addEventListener('abort', onAbort, { once: true });
    if (signal?.aborted) onAbort();
  });
}
