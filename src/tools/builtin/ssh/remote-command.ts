import type { Client, ClientChannel } from 'ssh2';
import { ByteOutputCapture, renderBoth } from '../../output-capture.ts';

/** The most characters of output a result shows, both streams together. */
const outputLimit = 20_000;

export type Ending = 'exited' | 'aborted' | 'closed';

export type CommandResult =
  | { kind: 'not-started'; error: Error }
  | { kind: 'finished'; ending: Ending; stdout: ByteOutputCapture; stderr: ByteOutputCapture; exitCode?: number; exitSignal?: string };

/** Both streams within the output budget, each labelled; a flood on one still leaves room for the other. */
export function renderStreams(stdout: ByteOutputCapture, stderr: ByteOutputCapture): string {
  const rendered = renderBoth(stdout, stderr, outputLimit);
  const sections = [
    stdout.totalCharacters > 0 ? `stdout:\n${rendered.stdout}` : '',
    stderr.totalCharacters > 0 ? `stderr:\n${rendered.stderr}` : '',
  ].filter(Boolean);
  return sections.length > 0 ? sections.join('\n') : '(no output)';
}

/** Runs one command on an open connection; a stop closes the channel and keeps what was printed. */
export function runCommand(client: Client, command: string, signal: AbortSignal): Promise<CommandResult> {
  return new Promise((resolve) => {
    const stdout = new ByteOutputCapture(outputLimit);
    const stderr = new ByteOutputCapture(outputLimit);
    let channel: ClientChannel | undefined;
    let exitCode: number | undefined;
    let exitSignal: string | undefined;
    let settled = false;

    const settle = (result: CommandResult) => {
      if (settled) return;
      settled = true;
      signal.removeEventListener('abort', abort);
      resolve(result);
    };
    const finish = (ending: Ending) => settle({ kind: 'finished', ending, stdout, stderr, exitCode, exitSignal });
    function abort() {
      if (channel) closeChannel(channel);
      finish('aborted');
    }

    if (signal.aborted) return finish('aborted');
    signal.addEventListener('abort', abort, { once: true });
    try {
      // No options: no `env` (local variables stay local) and no pty.
      client.exec(command, (error, opened) => {
        if (error) return settle({ kind: 'not-started', error });
        if (settled) return closeChannel(opened);
        channel = opened;
        // Nothing is ever sent to the command's input: ending it lets a command that reads stdin finish.
        opened.end();
        opened.on('data', (chunk: Buffer) => stdout.appendBytes(chunk));
        opened.stderr.on('data', (chunk: Buffer) => stderr.appendBytes(chunk));
        opened.on('exit', (code: number | null, signalName?: string) => {
          exitCode = code ?? undefined;
          exitSignal = signalName;
        });
        opened.on('close', () => finish(exitCode !== undefined || exitSignal !== undefined ? 'exited' : 'closed'));
      });
    } catch (error) {
      settle({ kind: 'not-started', error: error as Error });
    }
  });
}

function closeChannel(channel: ClientChannel): void {
  try {
    channel.signal('TERM');
  } catch {
    // The channel may already be closing; closing it below is what matters.
  }
  channel.close();
}
