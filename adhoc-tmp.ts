import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createOllamaBackend } from '/work/main/src/llm/ollama.ts';
import { createOpenAIBackend } from '/work/main/src/llm/openai.ts';

const mode = { value: '' };
let closedCount = 0;
const server = createServer((req, res) => {
  req.resume();
  res.on('close', () => { closedCount++; });
  if (mode.value === 'html') { res.writeHead(502, { 'content-type': 'text/html' }); res.end('<html><body>Bad Gateway</body></html>'); return; }
  if (mode.value === 'break-ollama') { res.writeHead(200); res.write(JSON.stringify({ message: { role: 'assistant', content: 'hi' }, done: false }) + '\n'); setTimeout(() => res.destroy(), 20); return; }
  if (mode.value === 'break-openai') { res.writeHead(200, {'content-type':'text/event-stream'}); res.write(`data: ${JSON.stringify({ choices: [{ index: 0, delta: { content: 'hi' } }] })}\n\n`); setTimeout(() => res.destroy(), 20); return; }
  if (mode.value === 'reasoning') { res.writeHead(200, {'content-type':'text/event-stream'}); res.write(`data: ${JSON.stringify({ choices: [{ index: 0, delta: { reasoning: 'why' } }] })}\n\n`); res.write(`data: ${JSON.stringify({ choices: [{ index: 0, delta: { content: 'ok' }, finish_reason: 'stop' }] })}\n\n`); res.end('data: [DONE]\n\n'); return; }
  if (mode.value === 'inband') { res.writeHead(200); res.write(JSON.stringify({ error: 'something broke in the runner' }) + '\n'); res.end(); return; }
  if (mode.value === 'openai-inband') { res.writeHead(200, {'content-type':'text/event-stream'}); res.write(`data: ${JSON.stringify({ error: { message: 'context length exceeded' } })}\n\n`); res.end(); return; }
  if (mode.value === 'forever') { res.writeHead(200); const t = setInterval(() => res.write(JSON.stringify({ message: { role: 'assistant', content: 'x' }, done: false }) + '\n'), 5); res.on('close', () => clearInterval(t)); return; }
});
await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
const port = (server.address() as AddressInfo).port;
const ollama = createOllamaBackend({ host: `http://127.0.0.1:${port}`, defaultModel: 'm' });
const openai = createOpenAIBackend({ baseUrl: `http://127.0.0.1:${port}/v1`, apiKey: '', defaultModel: 'm' });
const request = () => ({ model: 'm', messages: [{ role: 'user' as const, content: 'x' }], signal: new AbortController().signal });
for (const [name, backend] of [['html', ollama], ['html', openai], ['break-ollama', ollama], ['break-openai', openai], ['reasoning', openai], ['inband', ollama], ['openai-inband', openai]] as const) {
  mode.value = name;
  const events = [];
  for await (const e of backend.stream(request())) events.push(e);
  console.log(name, backend.id, JSON.stringify(events));
}
mode.value = 'forever';
for (const backend of [ollama, openai]) {
  const before = closedCount;
  for await (const e of backend.stream(request())) { if (e.type === 'text_delta') break; }
  await new Promise((r) => setTimeout(r, 50));
  console.log('break closes connection', backend.id, closedCount > before);
}
server.close(); server.closeAllConnections();
