// `npm run dev:fake-llm`'s CLI as that command runs it: a child process on a free port.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import path from 'node:path';

export interface FakeLlmProcess {
  /** The OLLAMA_HOST the CLI tells Hearth to use. */
  url: string;
  stop(): Promise<void>;
}

export async function startFakeLlmProcess(): Promise<FakeLlmProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', path.resolve('test/support/fake-llm-cli.ts')], {
    env: { PATH: process.env.PATH, HOME: process.env.HOME, FAKE_LLM_PORT: '0' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
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
