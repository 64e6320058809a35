import { spawn } from 'node:child_process';
import type { Jail } from './jail.ts';
import type { JailedCommand } from './jail-spec.ts';
import { endProcessTree } from './process-tree.ts';

// A filter program on untrusted bytes (ffmpeg and espeak-ng for speech, pdftotext for documents):
// input on its stdin, output from its stdout, in the strict jail without network.

/** A filter's command: what runs, in which jail, within which bounds. */
export interface FilterCommand {
  executable: string;
  args: readonly string[];
  /** Without network, seeing nothing of Hearth, when it is on. */
  jail: Jail;
  /** From the input being written to the process ending. */
  timeoutMs: number;
  /** More standard output than this ends the process. */
  maxOutputBytes: number;
}

export interface FilterOptions extends FilterCommand {
  /** Written to the process's standard input, which is then closed. */
  input: Buffer;
  signal?: AbortSignal;
}

export type FilterResult =
  | { ok: true; output: Buffer; stderr: string }
  | { ok: false; reason: 'failed' | 'timeout' | 'aborted' | 'output_too_large' | 'not_started'; exitCode?: number | null; stderr: string; message?: string };

/** A process started and waiting for its input; `feed` gives it and waits for the result. */
interface StartedProcess {
  readonly exited: boolean;
  feed(input: Buffer, signal: AbortSignal | undefined): Promise<FilterResult>;
  /** Ends it (if it still runs) and frees what its jail holds. */
  end(): void;
}

const keptStderrBytes = 8_000;
/** Only the PATH and a language: a filter needs nothing of Hearth's environment. */
const environment = { PATH: '/usr/local/bin:/usr/bin:/bin', LANG: 'C.UTF-8' };

/**
 * Runs a filter on bytes: input on its stdin, output from its stdout, in the strict jail without
 * network (what it reads is untrusted), ended with all it started on a timeout, an abort or too
 * much output. Never rejects.
 */
export async function runJailedFilter(options: FilterOptions): Promise<FilterResult> {
  if (options.signal?.aborted) return aborted;
  const started = await startJailedFilter(options);
  if ('reason' in started) return started;
  if (options.signal?.aborted) {
    started.end();
    return aborted;
  }
  return started.feed(options.input, options.signal);
}

/**
 * One command kept started ahead, waiting on its input, so a person's request does not wait for
 * the program to load (ffmpeg links some 200 libraries: about 100 ms before it reads a byte).
 * Each run takes the waiting process (or starts one if another run has it) and starts the next.
 */
export class ReadyJailedFilter {
  private spare: Promise<StartedProcess | undefined> | undefined;
  private closed = false;

  constructor(private readonly command: FilterCommand) {}

  /** Starts the waiting process now rather than at the first run. */
  prepare(): void {
    if (!this.closed) this.spare ??= this.startSpare();
  }

  async run(input: Buffer, signal?: AbortSignal): Promise<FilterResult> {
    if (signal?.aborted) return aborted;
    const waiting = await this.spare;
    this.spare = undefined;
    const started = waiting && !waiting.exited ? waiting : await startJailedFilter(this.command);
    if (waiting && waiting !== started) waiting.end();
    this.prepare();
    if ('reason' in started) return started;
    if (signal?.aborted) {
      started.end();
      return aborted;
    }
    return started.feed(input, signal);
  }

  close(): void {
    this.closed = true;
    const spare = this.spare;
    this.spare = undefined;
    void spare?.then((started) => started?.end());
  }

  private async startSpare(): Promise<StartedProcess | undefined> {
    const started = await startJailedFilter(this.command);
    if ('reason' in started) return undefined;
    if (this.closed) {
      started.end();
      return undefined;
    }
    return started;
  }
}

const aborted: FilterResult = { ok: false, reason: 'aborted', stderr: '' };

async function startJailedFilter(command: FilterCommand): Promise<StartedProcess | Extract<FilterResult, { ok: false }>> {
  let jailed: JailedCommand;
  try {
    jailed = await command.jail.wrap(
      command.executable,
      command.args,
      // Interactive: a person waits on it; its CPU time is bounded by the timeout all the same.
      { kind: 'strict', writable: [], cwd: '/tmp', network: false, cpuSeconds: Math.max(1, Math.ceil(command.timeoutMs / 1000)), interactive: true },
      environment,
    );
  } catch (error) {
    return { ok: false, reason: 'not_started', stderr: '', message: (error as Error).message };
  }
  return startJailed(command, jailed);
}

function startJailed(command: FilterCommand, jailed: JailedCommand): StartedProcess {
  const child = spawn(jailed.executable, jailed.args, { env: jailed.environment, stdio: ['pipe', 'pipe', 'pipe'], cwd: '/' });
  const chunks: Buffer[] = [];
  let outputBytes = 0;
  let stderr = '';
  let ended: 'timeout' | 'aborted' | 'output_too_large' | 'unused' | undefined;
  let startError: Error | undefined;
  let exited = false;
  let released = false;
  const release = () => {
    if (released) return;
    released = true;
    jailed.release();
  };
  const kill = (reason: NonNullable<typeof ended>) => {
    if (ended !== undefined || exited) return;
    ended = reason;
    jailed.signal('SIGKILL');
    if (child.pid !== undefined) endProcessTree(child.pid);
  };
  const closed = new Promise<number | null>((resolve) => {
    child.on('close', (exitCode) => {
      exited = true;
      release();
      resolve(exitCode);
    });
  });
  child.stdout.on('data', (chunk: Buffer) => {
    outputBytes += chunk.length;
    if (outputBytes > command.maxOutputBytes) kill('output_too_large');
    else chunks.push(chunk);
  });
  child.stderr.on('data', (chunk: Buffer) => {
    if (stderr.length < keptStderrBytes) stderr += chunk.toString('utf8');
  });
  child.stdin.on('error', () => {
    // EPIPE: it stopped reading (it could not read the audio); its stderr says why.
  });
  child.on('error', (error) => {
    startError = error;
  });
  return {
    get exited() {
      return exited;
    },
    end: () => {
      kill('unused');
      release();
    },
    feed: async (input, signal) => {
      const timer = setTimeout(() => kill('timeout'), command.timeoutMs);
      const onAbort = () => kill('aborted');
      signal?.addEventListener('abort', onAbort, { once: true });
      child.stdin.end(input);
      const exitCode = await closed;
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      const kept = stderr.slice(0, keptStderrBytes);
      if (startError !== undefined) return { ok: false, reason: 'not_started', stderr: kept, message: startError.message };
      if (ended !== undefined && ended !== 'unused') return { ok: false, reason: ended, exitCode, stderr: kept };
      if (exitCode !== 0) return { ok: false, reason: 'failed', exitCode, stderr: kept };
      return { ok: true, output: Buffer.concat(chunks), stderr: kept };
    },
  };
}
