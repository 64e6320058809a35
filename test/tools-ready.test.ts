// Right after a start the user tools are still loading and the MCP servers connecting: a
// message sent at once (no wait for tools_changed) must still find both kinds of tool.
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { fixtureServer, writeMcpConfig } from './support/mcp-servers.ts';
import { startScriptedOllama } from './support/scripted-ollama.ts';
import { closedOnce, startHearth } from './support/hearth-server.ts';
import { startChildServer } from './support/server-child.ts';

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const counterTool = `
let calls = 0;
export const name = 'counter';
export const description = 'Counts its calls.';
export const parameters = { type: 'object', properties: {}, additionalProperties: false };
export async function execute() {
  calls += 1;
  return { output: 'counted ' + calls, success: true };
}
`;

const profile = `---
id: tool_user
name: Tool user
max_iterations: 6
planning_enabled: false
tools: ["mcp:helper"]
---
You use tools.
`;

it('a message sent the moment the restarted server answers runs a user tool and an MCP tool', async () => {
  const llm = await startScriptedOllama();
  cleanups.push(() => llm.close());
  const dataDir = await mkdtemp(path.join(tmpdir(), 'hearth-tools-ready-'));
  cleanups.push(() => rm(dataDir, { recursive: true, force: true }));
  await mkdir(path.join(dataDir, 'user-tools'), { recursive: true });
  await writeFile(path.join(dataDir, 'user-tools', 'counter.ts'), counterTool);
  await writeMcpConfig(path.join(dataDir, 'mcp.json'), { helper: fixtureServer() });
  const environment = { OLLAMA_HOST: llm.url };

  // The first run makes the session (and writes the profiles): in this process, on the same folders, as a child
  // server costs seconds to start; the restarted server is the child.
  const first = closedOnce(await startHearth({ dataDir, llm, profiles: { tool_user: profile } }));
  cleanups.push(() => first.close());
  const sessionId = await first.createSession('tool_user');
  await first.close();

  const server = await startChildServer(dataDir, environment);
  cleanups.push(() => server.kill());
  llm.script({ toolCalls: [{ name: 'counter', arguments: {} }, { name: 'helper__echo', arguments: { text: 'from the fixture' } }] }, { content: 'Done.' });
  const socket = await server.connect(sessionId);
  cleanups.push(async () => socket.close());
  socket.send({ type: 'message', content: 'Count, then echo' });
  await socket.next('stream_end', 30_000);

  const calls = socket.ofType('tool_call').map(({ tool, result, success }) => ({ tool, result, success }));
  expect(calls).toEqual([
    { tool: 'counter', result: 'counted 1', success: true },
    { tool: 'helper__echo', result: 'from the fixture', success: true },
  ]);
}, 90_000);
