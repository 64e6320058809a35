// `npm run dev:fake-llm`'s CLI as that command runs it: a child process on a free port.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import path from 'node:path';

export interface FakeLlmProcess {
  /** The OLLAMA_HOST the CLI tells Hearth to use. */
  url: string;
  stop(): Promise<void>;
}

function spawnCli(args: readonly string[]) {
  return spawn(process.execPath, ['--import', 'tsx', path.resolve('test/support/fake-llm-cli.ts'), ...args], {
    env: { PATH: process.env.PATH, HOME: process.env.HOME, FAKE_LLM_PORT: '0' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

/** Runs the CLI until it exits by itself (a refused start), with what it wrote. */
export async function runFakeLlmToExit(args: readonly string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawnCli(args);
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (data: Buffer) => (stdout += data.toString()));
  child.stderr.on('data', (data: Buffer) => (stderr += data.toString()));
  const [code] = (await once(child, 'close')) as [number | null];
  return { code, stdout, stderr };
}

export async function startFakeLlmProcess(args: readonly string[] = []): Promise<FakeLlmProcess> {
  const child = spawnCli(args);
  let output = '';
  const url = await new Promise<string>((resolve, reject) => {
    const read = (data: Buffer): void => {
      output += data.toString();
      const found = /start Hearth with: OLLAMA_HOST=(\S+) npm start/.exec(output);
      if (found?.[1]) resolve(found[1]);
    };
    child.stdout?.on('data', read);
    child.stderr?.on('data', read);
    child.once('exit', (code) => reject(new Error(`the fake LLM exited (${code}): ${output}`)));
  });
  return {
    url,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = once(child, 'exit');
      child.kill('SIGTERM');
      await exited;
    },
  };
}
