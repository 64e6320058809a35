// The server's end of a user-tool host process (host-process.mjs is the script the process runs).

import { spawn, type ChildProcess } from 'node:child_process';
import { getPriority, setPriority, tmpdir } from 'node:os';
import path from 'node:path';
import type { Duplex } from 'node:stream';
import type { ResourceLimits } from 'node:worker_threads';
import { interpreterFolders } from '../../jail/interpreters.ts';
import type { Jail } from '../../jail/jail.ts';
import { readChildPid } from '../../jail/network-namespace.ts';
import { endProcessTree } from '../../jail/process-tree.ts';
import { packagePath } from '../../package-root.ts';
import { toolEnvironment } from '../tool-environment.ts';
import type { HostEnd, HostTransport } from './host-transport.ts';
import type { HostToServer, ModuleToLoad, ServerToHost } from './protocol.ts';
import { RssWatch } from './rss-watch.ts';
import { sandboxFlags, type Sandbox } from './sandbox.ts';

export interface HostProcessOptions {
  /** The V8 heap limits (old and young generation); the stack size is Node's default. */
  resourceLimits: ResourceLimits;
  /** What the process may touch besides its script and its modules; nothing when absent. */
  sandbox?: Sandbox;
  /** Its whole environment (already scrubbed); toolEnvironment('') when absent. */
  environment?: NodeJS.ProcessEnv;
  /** The process is ended when its resident memory passes this (USER_TOOL_MAX_RSS_MB); 256 when absent. */
  maxRssMb?: number;
  /** The strict jail the host runs in; network only when the tools it hosts were granted `network`. */
  jail?: Jail;
}

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
    for (const host of runningHosts) if (host.pid !== undefined) endProcessTree(host.pid);
  });
}

/**
 * One user-tool host process, under Node's permission model and, where there is one, the strict
 * jail: the child, its framed pipe (fd 3, one JSON text per line), its stderr tail and the watch
 * on its resident memory. It keeps the messages about the process itself (`crash`, `memory`)
 * and hands the others on; a malformed message, too much memory or an exit ends it.
 */
export class HostProcess implements HostTransport {
  onmessage?: (message: HostToServer) => void;
  onclose?: (end: HostEnd) => void;
  ended: HostEnd | undefined;
  private child: ChildProcess | undefined;
  private channel: Duplex | undefined;
  private exited: Promise<void> = Promise.resolve();
  private crashMessage: string | undefined;
  private stderrTail = '';
  private pendingChunks: Buffer[] = [];
  private pendingBytes = 0;
  private watch: RssWatch | undefined;
  /** Until its manifest arrives it is loading, and then while calls it was sent are unanswered: its memory is read often. */
  private loading = true;
  private readonly callsRunning = new Set<number>();

  constructor(
    private readonly options: HostProcessOptions,
    private readonly modules: ModuleToLoad[],
  ) {}

  get pid(): number | undefined {
    return this.child?.pid;
  }

  /** The end of what it wrote to stderr (V8's out-of-memory report, a tool's console.error). */
  get stderr(): string {
    return this.stderrTail;
  }

  async start(): Promise<void> {
    const { options, modules } = this;
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
    if (child.pid !== undefined) register(child);
    this.attach(child, child.stdio[3] as Duplex);
    const hostPid = jailed ? await readChildPid(child, 4).catch(() => undefined) : child.pid;
    if (hostPid !== undefined) {
      try {
        setPriority(hostPid, Math.min(19, getPriority() + hostNiceness));
      } catch {
        // Not permitted here (or the process is gone already): it runs at the server's priority.
      }
      this.watchMemory(hostPid);
    }
    this.send({
      type: 'load',
      modules,
      ...(sandbox.workFolder !== undefined && { workFolder: sandbox.workFolder }),
      ...(this.watch?.available === false && { memoryReportMs }),
    });
  }

  send(message: ServerToHost): void {
    if (this.ended !== undefined || !this.channel?.writable) return;
    if (message.type === 'call') {
      this.callsRunning.add(message.callId);
      this.watch?.wake();
    }
    this.channel.write(`${JSON.stringify(message)}\n`);
  }

  /** Ends the process (if it still runs) and waits until it has exited. */
  async close(): Promise<void> {
    this.watch?.stop();
    const { child } = this;
    // The whole tree: bubblewrap's outer process alone would leave a jail that is still being set up behind.
    if (child?.pid !== undefined && child.exitCode === null && child.signalCode === null) endProcessTree(child.pid);
    await this.exited;
  }

  private attach(child: ChildProcess, channel: Duplex): void {
    this.child = child;
    this.channel = channel;
    this.exited = new Promise((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) resolve();
      child.once('exit', () => resolve());
      child.once('error', () => {
        if (child.pid === undefined) resolve();
      });
    });
    child.on('exit', (code, signal) => this.end({ reason: this.describeExit(code, signal) }));
    child.on('error', (error) => this.end({ reason: `the tool host could not run: ${error.message}` }));
    child.stderr?.on('data', (chunk: Buffer) => {
      this.stderrTail = (this.stderrTail + chunk.toString('utf8')).slice(-stderrTailBytes);
    });
    channel.on('data', (chunk: Buffer) => this.receive(chunk));
    channel.on('error', () => undefined);
  }

  /** Watches the resident memory of the process running the tools (inside a jail, not bubblewrap's). */
  private watchMemory(pid: number): void {
    if (this.ended !== undefined) return;
    const maxRssMb = this.options.maxRssMb ?? 256;
    this.watch = new RssWatch(pid, maxRssMb * 1024 * 1024, () => this.loading || this.callsRunning.size > 0, (rss) =>
      this.endAndKill({
        reason: `the tool host used more than ${maxRssMb} MB of memory (${Math.round(rss / 1024 / 1024)} MB; USER_TOOL_MAX_RSS_MB) and was ended`,
        memory: { limitMb: maxRssMb },
      }),
    );
  }

  /** Reports the end and ends the process. */
  private endAndKill(end: HostEnd): void {
    this.end(end);
    void this.close();
  }

  private end(end: HostEnd): void {
    if (this.ended !== undefined) return;
    this.ended = end;
    this.watch?.stop();
    this.onclose?.(end);
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
        this.endAndKill({ reason: 'the tool host sent a message that is not JSON and was ended' });
        return;
      }
      if (typeof message !== 'object' || message === null || typeof (message as { type?: unknown }).type !== 'string') {
        this.endAndKill({ reason: 'the tool host sent a malformed message and was ended' });
        return;
      }
      this.handle(message as HostToServer);
      if (this.ended !== undefined) return;
    }
    if (start < chunk.length) {
      const rest = chunk.subarray(start);
      this.pendingChunks.push(rest);
      this.pendingBytes += rest.length;
      if (this.pendingBytes > maxMessageBytes) this.endAndKill({ reason: `the tool host sent a message over ${maxMessageBytes / 1024 / 1024} MB and was ended` });
    }
  }

  private handle(message: HostToServer): void {
    if (message.type === 'crash') this.crashMessage = String(message.message);
    else if (message.type === 'memory') this.watch?.check(Number(message.rss));
    else {
      if (message.type === 'manifest') this.loading = false;
      if (message.type === 'result') this.callsRunning.delete(message.callId);
      this.onmessage?.(message);
    }
  }

  private describeExit(code: number | null, signal: NodeJS.Signals | null): string {
    if (/heap out of memory|Reached heap limit/i.test(this.stderrTail)) {
      return `a tool ran out of memory (the host's JavaScript heap limit is ${this.options.resourceLimits.maxOldGenerationSizeMb ?? '?'} MB)`;
    }
    if (this.crashMessage !== undefined) return `the tool host crashed: ${this.crashMessage}`;
    const lastLine = this.stderrTail.trim().split('\n').at(-1)?.trim().slice(0, 200);
    return `the tool host exited (${signal ? `signal ${signal}` : `code ${code}`})${lastLine ? `: ${lastLine}` : ''}`;
  }
}
