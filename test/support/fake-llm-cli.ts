import { startFakeLlm } from './fake-llm.ts';

async function main(): Promise<void> {
  const openai = process.argv.includes('--openai');
  const port = Number(process.env.FAKE_LLM_PORT ?? 11435);
  const server = await startFakeLlm({ port, host: '127.0.0.1', openai });
  const start = openai
    ? `LLM_BACKEND=openai OPENAI_BASE_URL=${server.url} OPENAI_MODEL=fake npm start`
    : `OLLAMA_HOST=${server.url} npm start`;
  console.log(`Fake ${openai ? 'OpenAI-compatible' : 'Ollama'} LLM listening; start Hearth with: ${start}`);
  console.log('Start a message with "plan", "long" or "make a tool" to see a plan, a long answer to stop, or a tool written and used.');
  const stop = (): void => {
    server.close().then(() => process.exit(0));
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

await main();
