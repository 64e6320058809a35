import { spawn, type ChildProcess } from 'node:child_process';
import { performance } from 'node:perf_hooks';
import type { Jail } from '../jail/jail.ts';
import type { JailedCommand, JailSpec } from '../jail/jail-spec.ts';
import type { ToolOutput } from './tool.ts';
import { OutputCapture, renderBoth } from './output-capture.ts';
import { processMarkerVariable, signalCallProcesses } from './process-markers.ts';
import { toolEnvironment } from './tool-environment.ts';

export interface RunProcessOptions {
  executable: string;
  args: readonly string[];
  cwd: string;
  /**
   * The whole environment of the process. Without it the process gets the scrubbed tool
   * environment (no passthrough), never the server's own: that holds AUTH_TOKEN and API keys.
   */
  env?: NodeJS.ProcessEnv;
  /** Text written to the process's standard input; without it, stdin is empty. */
  stdin?: string;
  timeoutMs: number;
  signal?: AbortSignal;
  /** Characters of stdout and stderr together in the result; also bounds what is held in memory. */
  maxOutputCharacters?: number;
  /** Time between SIGTERM and SIGKILL when the process group is stopped. */
  killGraceMs?: number;
  /**
   * The call's `HEARTH_PROCESS` marker (`ProcessMarkers.forCall`), added to the environment and
   * inherited by everything the process starts. A timeout or stop then also ends the processes
   * carrying it outside the group (a child that called `setsid`), and at start the server ends
   * what a crashed run left (see process-markers.ts).
   */
  marker?: string;
  /** The jail the process runs in (docs/security.md, *The jail*); without it, it runs as the server's user, unjailed. */
  jail?: { jail: Jail; spec: JailSpec };
}

export interface ProcessResult {
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  timedOut: boolean;
  aborted: boolean;
  durationMs: number;
  /** Set when the process could not start, e.g. ENOENT for a missing executable. */
  spawnError?: { code: string; message: string };
}

const defaultMaxOutputCharacters = 20_000;
const defaultKillGraceMs = 2_000;
/** After the process exits, how long to keep reading from pipes a background child may still hold open. */
const drainAfterExitMs = 250;

function signalGroup(processId: number | undefined, signal: NodeJS.Signals): void {
  if (processId === undefined) return;
  try {
    process.kill(-processId, signal);
  } catch {
    // ESRCH: every process of the group has already ended.
  }
}

/**
 * Runs one process as the leader of its own process group. A timeout or an abort stops the
 * whole group (SIGTERM, then SIGKILL after a grace period), so children it started die too.
 * Never rejects: a failure to start is reported in `spawnError`.
 */
export async function runProcess(options: RunProcessOptions): Promise<ProcessResult> {
  if (options.jail === undefined) return runPlainProcess(options);
  let jailed: JailedCommand;
  try {
    // CPU time beside the wall clock: no process of the call computes for longer than the call may last.
    const spec = { ...options.jail.spec, cpuSeconds: options.jail.spec.cpuSeconds ?? Math.max(1, Math.ceil(options.timeoutMs / 1000)) };
    jailed = await options.jail.jail.wrap(options.executable, options.args, spec, options.env ?? toolEnvironment(''));
  } catch (error) {
    return { exitCode: null, signal: null, stdout: '', stderr: '', timedOut: false, aborted: false, durationMs: 0, spawnError: { code: 'EJAIL', message: (error as Error).message } };
  }
  try {
    return await runPlainProcess({ ...options, executable: jailed.executable, args: jailed.args, env: jailed.environment }, jailed);
  } finally {
    jailed.release();
  }
}

function runPlainProcess(options: RunProcessOptions, jailed?: JailedCommand): Promise<ProcessResult> {
  const budget = options.maxOutputCharacters ?? defaultMaxOutputCharacters;
  const graceMs = options.killGraceMs ?? defaultKillGraceMs;
  const stdout = new OutputCapture(budget);
  const stderr = new OutputCapture(budget);
  const started = performance.now();

  if (options.signal?.aborted) {
    return Promise.resolve({ exitCode: null, signal: null, stdout: '', stderr: '', timedOut: false, aborted: true, durationMs: 0 });
  }

  return new Promise((resolve) => {
    let child: ChildProcess;
    try {
      child = spawn(options.executable, options.args, {
        cwd: options.cwd,
        env: { ...(options.env ?? toolEnvironment('')), ...(options.marker !== undefined && { [processMarkerVariable]: options.marker }) },
        detached: true,
        stdio: [options.stdin === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
      });
    } catch (error) {
      const { code = 'EINVAL', message } = error as NodeJS.ErrnoException;
      resolve({ exitCode: null, signal: null, stdout: '', stderr: '', timedOut: false, aborted: false, durationMs: 0, spawnError: { code, message } });
      return;
    }
    let timedOut = false;
    let aborted = false;
    let stopping = false;
    let forceKilled = false;
    let exited = false;
    let finished = false;
    let exitCode: number | null = null;
    let exitSignal: NodeJS.Signals | null = null;
    let spawnError: ProcessResult['spawnError'];
    let forceTimer: NodeJS.Timeout | undefined;
    let drainTimer: NodeJS.Timeout | undefined;
    const timeoutTimer = setTimeout(() => {
      timedOut = true;
      stop();
    }, options.timeoutMs);
    options.signal?.addEventListener('abort', onAbort, { once: true });

    function onAbort() {
      aborted = true;
      stop();
    }
    function signalMarked(signal: NodeJS.Signals): Promise<unknown> {
      if (options.marker === undefined) return Promise.resolve();
      return signalCallProcesses(options.marker, signal).catch(() => undefined);
    }
    function stop() {
      if (stopping) return;
      stopping = true;
      // The jail's control group first: the marker scan below reads /proc, which waits on processes that fork.
      jailed?.signal('SIGTERM');
      signalGroup(child.pid, 'SIGTERM');
      void signalMarked('SIGTERM');
      forceTimer = setTimeout(() => {
        forceKilled = true;
        jailed?.signal('SIGKILL');
        signalGroup(child.pid, 'SIGKILL');
        if (exited) scheduleDrain();
      }, graceMs);
    }
    function scheduleDrain() {
      drainTimer ??= setTimeout(finish, drainAfterExitMs);
    }
    function finish() {
      if (finished) return;
      finished = true;
      clearTimeout(timeoutTimer);
      clearTimeout(forceTimer);
      clearTimeout(drainTimer);
      options.signal?.removeEventListener('abort', onAbort);
      // Whatever survived SIGTERM without holding our pipes must not outlive the call.
      if (stopping) signalGroup(child.pid, 'SIGKILL');
      child.stdout?.destroy();
      child.stderr?.destroy();
      const result: ProcessResult = {
        exitCode,
        signal: exitSignal,
        ...renderBoth(stdout, stderr, budget),
        timedOut,
        aborted,
        durationMs: Math.round(performance.now() - started),
        ...(spawnError && { spawnError }),
      };
      // Nor what left the group: the call's stragglers found by its marker are ended before it returns.
      if (stopping) void signalMarked('SIGKILL').then(() => resolve(result));
      else resolve(result);
    }

    child.stdout?.setEncoding('utf8').on('data', (chunk: string) => stdout.append(chunk));
    child.stderr?.setEncoding('utf8').on('data', (chunk: string) => stderr.append(chunk));
    if (child.stdin) {
      child.stdin.on('error', () => {
        // EPIPE: the process ended without reading all of its input.
      });
      child.stdin.end(options.stdin);
    }
    child.on('error', (error: NodeJS.ErrnoException) => {
      if (child.pid !== undefined) return;
      spawnError = { code: error.code ?? 'UNKNOWN', message: error.message };
      finish();
    });
    child.on('exit', (code, signal) => {
      exited = true;
      exitCode = code;
      exitSignal = signal;
      // While stopping, wait for the pipes to close or for SIGKILL: a grandchild may still be running.
      if (!stopping || forceKilled) scheduleDrain();
    });
    child.on('close', finish);
  });
}

function seconds(milliseconds: number): string {
  return `${(milliseconds / 1000).toFixed(2)} s`;
}

/** The result as the model reads it; only a clean exit with code 0 is a success. */
export function describeProcessResult(result: ProcessResult, timeoutSeconds: number): ToolOutput {
  const killed = 'the process and everything it started were killed';
  let status: string;
  if (result.timedOut) status = `Timed out after ${timeoutSeconds} s; ${killed}. Partial output follows.`;
  else if (result.aborted) status = `Stopped by the user after ${seconds(result.durationMs)}; ${killed}. Partial output follows.`;
  else if (result.exitCode !== null) status = `Exit code ${result.exitCode} in ${seconds(result.durationMs)}.`;
  else status = `Killed by ${result.signal ?? 'a signal'} after ${seconds(result.durationMs)}.`;
  const sections = [status];
  if (result.stdout !== '') sections.push(`stdout:\n${result.stdout}`);
  if (result.stderr !== '') sections.push(`stderr:\n${result.stderr}`);
  if (result.stdout === '' && result.stderr === '') sections.push('(no output)');
  const output = sections.join('\n');
  return result.exitCode === 0 && !result.timedOut && !result.aborted ? output : { output, success: false };
}
