import { spawn } from 'node:child_process';
import type { Jail } from '../jail/jail.ts';
import type { JailedCommand } from '../jail/jail-spec.ts';
import { endProcessTree } from '../jail/process-tree.ts';

export interface AudioProcessOptions {
  executable: string;
  args: readonly string[];
  /** Written to the process's standard input, which is then closed. */
  input: Buffer;
  /** Without network, seeing nothing of Hearth, when it is on. */
  jail: Jail;
  timeoutMs: number;
  signal?: AbortSignal;
  /** More standard output than this ends the process. */
  maxOutputBytes: number;
}

export type AudioProcessResult =
  | { ok: true; output: Buffer; stderr: string }
  | { ok: false; reason: 'failed' | 'timeout' | 'aborted' | 'output_too_large' | 'not_started'; exitCode?: number | null; stderr: string; message?: string };

const keptStderrBytes = 8_000;
/** Only the PATH and a language: an audio tool needs nothing of Hearth's environment. */
const environment = { PATH: '/usr/local/bin:/usr/bin:/bin', LANG: 'C.UTF-8' };

/**
 * Runs an audio tool (ffmpeg, espeak-ng) on bytes: input on its stdin, output from its stdout,
 * in the strict jail without network (the audio is untrusted), ended with all it started on a
 * timeout, an abort or too much output. Never rejects.
 */
export async function runAudioProcess(options: AudioProcessOptions): Promise<AudioProcessResult> {
  if (options.signal?.aborted) return { ok: false, reason: 'aborted', stderr: '' };
  let jailed: JailedCommand;
  try {
    jailed = await options.jail.wrap(
      options.executable,
      options.args,
      // Interactive: a person waits on it; its CPU time is bounded by the timeout all the same.
      { kind: 'strict', writable: [], cwd: '/tmp', network: false, cpuSeconds: Math.max(1, Math.ceil(options.timeoutMs / 1000)), interactive: true },
      environment,
    );
  } catch (error) {
    return { ok: false, reason: 'not_started', stderr: '', message: (error as Error).message };
  }
  try {
    if (options.signal?.aborted) return { ok: false, reason: 'aborted', stderr: '' };
    return await run(options, jailed);
  } finally {
    jailed.release();
  }
}

function run(options: AudioProcessOptions, jailed: JailedCommand): Promise<AudioProcessResult> {
  return new Promise((resolve) => {
    const child = spawn(jailed.executable, jailed.args, { env: jailed.environment, stdio: ['pipe', 'pipe', 'pipe'], cwd: '/' });
    const chunks: Buffer[] = [];
    let outputBytes = 0;
    let stderr = '';
    let ended: 'timeout' | 'aborted' | 'output_too_large' | undefined;
    let startError: Error | undefined;
    const end = (reason: NonNullable<typeof ended>) => {
      if (ended !== undefined) return;
      ended = reason;
      jailed.signal('SIGKILL');
      if (child.pid !== undefined) endProcessTree(child.pid);
    };
    const timer = setTimeout(() => end('timeout'), options.timeoutMs);
    const onAbort = () => end('aborted');
    options.signal?.addEventListener('abort', onAbort, { once: true });
    child.stdout.on('data', (chunk: Buffer) => {
      outputBytes += chunk.length;
      if (outputBytes > options.maxOutputBytes) end('output_too_large');
      else chunks.push(chunk);
    });
    child.stderr.on('data', (chunk: Buffer) => {
      if (stderr.length < keptStderrBytes) stderr += chunk.toString('utf8');
    });
    child.stdin.on('error', () => {
      // EPIPE: it stopped reading (it could not read the audio); its stderr says why.
    });
    child.stdin.end(options.input);
    child.on('error', (error) => {
      startError = error;
    });
    child.on('close', (exitCode) => {
      clearTimeout(timer);
      options.signal?.removeEventListener('abort', onAbort);
      stderr = stderr.slice(0, keptStderrBytes);
      if (startError !== undefined) resolve({ ok: false, reason: 'not_started', stderr, message: startError.message });
      else if (ended !== undefined) resolve({ ok: false, reason: ended, exitCode, stderr });
      else if (exitCode !== 0) resolve({ ok: false, reason: 'failed', exitCode, stderr });
      else resolve({ ok: true, output: Buffer.concat(chunks), stderr });
    });
  });
}
