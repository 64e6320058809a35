import { parseArgs } from 'node:util';
import { startFakeLlm } from './fake-llm.ts';

const usage = 'Usage: npm run dev:fake-llm -- [--port <port>] [--openai]';

function portFrom(value: string | undefined): number {
  const port = Number(value ?? process.env.FAKE_LLM_PORT ?? 11435);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    console.error(`The port must be a whole number from 0 to 65535, not "${value}". ${usage}`);
    process.exit(2);
  }
  return port;
}

async function main(): Promise<void> {
  let options: { port?: string | undefined; openai?: boolean | undefined };
  try {
    ({ values: options } = parseArgs({ options: { port: { type: 'string' }, openai: { type: 'boolean' } } }));
  } catch (error) {
    console.error(`${error instanceof Error ? error.message : String(error)}. ${usage}`);
    process.exit(2);
  }
  const openai = options.openai ?? false;
  const port = portFrom(options.port);
  const server = await startFakeLlm({ port, host: '127.0.0.1', openai }).catch((error: unknown) => {
    const code = (error as { code?: unknown }).code;
    if (code === 'EADDRINUSE') {
      console.error(`Port ${port} is already in use (another fake LLM, or Ollama?). Stop it, or pick another port: npm run dev:fake-llm -- --port ${port + 1}`);
    } else {
      console.error(`The fake LLM could not start: ${error instanceof Error ? error.message : String(error)}`);
    }
    process.exit(1);
  });
  const start = openai
    ? `LLM_BACKEND=openai OPENAI_BASE_URL=${server.url} OPENAI_MODEL=fake npm start`
    : `OLLAMA_HOST=${server.url} npm start`;
  console.log(`Fake ${openai ? 'OpenAI-compatible' : 'Ollama'} LLM listening; start Hearth with: ${start}`);
  console.log('Start a message with "plan", "long" or "make a tool" to see a plan, a long answer to stop, or a tool written and used.');
  console.log('It also calls tools from everyday asks: "run `uptime`" (terminal), "remind me every day at 9 to check mail" (schedule), "add a todo to buy milk" (todo).');
  const stop = (): void => {
    server.close().then(() => process.exit(0));
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

await main();
