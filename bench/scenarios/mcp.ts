// Scenario 20: MCP servers (docs/architecture.md, Tool sources and MCP servers).
// (a) An `echo` call to the fixture MCP server (test/support/mcp-fixture-server.mjs, over stdio)
//     through Hearth's tool, in this process: McpServers over a temp mcp.json, its registry entry
//     called through executeToolCall (as the tool loop calls it) and through Tool.execute, against
//     the same call made with a bare SDK Client on its own connection to a second fixture server;
//     the three interleaved, so machine noise hits all alike.
// (b) spawn → first 200 from /health of a server process whose mcp.json lists 10 fixture servers,
//     against one whose mcp.json lists none, alternating; and how long until all 10 are connected.
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { parseConfig } from '../../src/config.ts';
import { IntegrationRegistry } from '../../src/integrations/integration-registry.ts';
import { createLogger } from '../../src/logger.ts';
import { openDatabase } from '../../src/store/database.ts';
import { executeToolCall } from '../../src/tools/execute-tool-call.ts';
import { McpServers, type McpServerSummary } from '../../src/tools/mcp/mcp-servers.ts';
import { toToolResult, type Tool } from '../../src/tools/tool.ts';
import { ToolRegistry } from '../../src/tools/tool-registry.ts';
import { fixtureScript } from '../../test/support/mcp-servers.ts';
import { epochNow, sleep } from '../epoch-time.ts';
import { projectRoot } from '../project-root.ts';
import type { ScenarioResult } from '../report.ts';
import { ServerProcess } from '../server-process.ts';
import { median, milliseconds, percentile } from '../statistics.ts';
import { makeTemporaryDirectory, removeTemporaryDirectory } from '../temporary-directories.ts';
import type { BenchContext } from './bench-context.ts';
import { medianAndP95, spread, toolContext, withDeadline } from './tool-calls.ts';

const warmUpCalls = 300;
const measuredCalls = 1_000;
const callBudgetMs = 2;
const serverCount = 10;
const rounds = 6;
const startBudgetMs = 50;
/** How long a server (or ten) may take to connect before the scenario gives up. */
const connectDeadlineMs = 30_000;
const echoText = 'hello from the Hearth bench';
const serverName = 'fixture';
const echoToolName = `${serverName}__echo`;

/** The fixture server as an mcp.json entry: `node <script>`, never npx. */
const fixtureEntry = () => ({ command: process.execPath, args: [fixtureScript] });

function textOf(result: CallToolResult): string {
  return result.content.map((block) => (block.type === 'text' ? block.text : `[${block.type}]`)).join('');
}

// ——— (a) the echo call ———

export async function mcpEchoCalls(): Promise<ScenarioResult> {
  const directory = await makeTemporaryDirectory('hearth-bench-mcp-call-');
  const abort = new AbortController();
  let servers: McpServers | undefined;
  let bare: Client | undefined;
  try {
    const configFile = path.join(directory, 'mcp.json');
    await writeFile(configFile, `${JSON.stringify({ mcpServers: { [serverName]: fixtureEntry() } }, null, 2)}\n`);
    const registry = new ToolRegistry();
    const config = parseConfig({});
    servers = new McpServers({
      configFile,
      dataDir: directory,
      registry,
      integrations: new IntegrationRegistry(),
      logger: createLogger('silent'),
      toolTimeoutMs: config.MCP_TOOL_TIMEOUT_MS,
      watch: false,
    });
    const hearthConnectStarted = performance.now();
    const connected = new Promise<void>((resolve) => {
      const check = () => {
        if (registry.get(echoToolName)) {
          registry.off('changed', check);
          resolve();
        }
      };
      registry.on('changed', check);
      check();
    });
    await servers.start();
    await withDeadline(connected, connectDeadlineMs, `the MCP server ${serverName} connecting through McpServers`);
    const hearthConnectMs = performance.now() - hearthConnectStarted;

    // The bare client: what any MCP client does, initialize and tools/list, then the same call on its own connection.
    const bareConnectStarted = performance.now();
    bare = new Client({ name: 'hearth-bench', version: '1.0.0' });
    await withDeadline(
      bare.connect(new StdioClientTransport({ command: process.execPath, args: [fixtureScript], stderr: 'ignore' })),
      connectDeadlineMs,
      'the bare SDK client connecting',
    );
    await bare.listTools();
    const bareConnectMs = performance.now() - bareConnectStarted;

    const entry = registry.get(echoToolName)!;
    const tool: Tool = entry.tool;
    const context = toolContext('s', abort.signal);
    const args = { text: echoText };
    const options = { registry, allowedNames: [echoToolName], context, defaultTimeoutMs: config.MCP_TOOL_TIMEOUT_MS, authorize: async () => ({ allowed: true as const }) };
    const bareClient = bare;

    const check = (what: string, success: boolean, output: string) => {
      if (!success || output !== echoText) throw new Error(`${what}: expected ${JSON.stringify(echoText)}, got ${success ? '' : 'a failure '}${JSON.stringify(output.slice(0, 300))}`);
    };
    const viaExecutor = async () => {
      const startedAt = performance.now();
      const result = await executeToolCall({ name: echoToolName, arguments: args }, options);
      const elapsed = performance.now() - startedAt;
      check('executeToolCall', result.success, result.output);
      return elapsed;
    };
    const viaExecute = async () => {
      // A signal of its own per call, as executeToolCall gives each.
      const callContext = toolContext('s', new AbortController().signal);
      const startedAt = performance.now();
      const result = toToolResult(await tool.execute(args, callContext));
      const elapsed = performance.now() - startedAt;
      check('Tool.execute', result.success, result.output);
      return elapsed;
    };
    const viaBare = async () => {
      const startedAt = performance.now();
      const result = (await bareClient.callTool({ name: 'echo', arguments: args })) as CallToolResult;
      const elapsed = performance.now() - startedAt;
      check('the bare client', result.isError !== true, textOf(result));
      return elapsed;
    };

    const ways = [viaExecutor, viaExecute, viaBare];
    const samples: number[][] = [[], [], []];
    // Interleaved, the order turned each round so none always goes first.
    for (let call = 0; call < warmUpCalls + measuredCalls; call++) {
      for (let step = 0; step < ways.length; step++) {
        const way = (call + step) % ways.length;
        const elapsed = await ways[way]!();
        if (call >= warmUpCalls) samples[way]!.push(elapsed);
      }
    }
    const [executor, execute, direct] = samples as [number[], number[], number[]];
    const overheadMs = median(executor) - median(direct);
    const executeOverheadMs = median(execute) - median(direct);
    const paired = executor.map((value, index) => value - direct[index]!);
    const signed = (value: number, digits = 3) => `${value >= 0 ? '+' : '−'}${Math.abs(value).toFixed(digits)} ms`;

    return {
      rows: [
        {
          scenario: '20a. MCP `echo` call: Hearth (`executeToolCall`) − bare SDK client',
          measured:
            `${signed(overheadMs)} (Hearth ${medianAndP95(executor, 3)} vs bare ${medianAndP95(direct, 3)}); ` +
            `via \`Tool.execute\` ${signed(executeOverheadMs)}; ${measuredCalls} calls each`,
          target: `median difference < ${callBudgetMs} ms`,
          passed: overheadMs < callBudgetMs,
        },
      ],
      details: [
        `MCP echo call: in the bench process, McpServers (src/tools/mcp/mcp-servers.ts, watch off) over a temp mcp.json naming one ` +
          `stdio server, \`node test/support/mcp-fixture-server.mjs\` (the SDK's McpServer; its \`echo\` tool answers its \`text\`), ` +
          `with a ToolRegistry, an IntegrationRegistry and createLogger('silent'), connected in ${milliseconds(hearthConnectMs, 0)}. ` +
          `Hearth: \`executeToolCall({name: '${echoToolName}', arguments: {text}})\` (allow-list, argument validation against the ` +
          `tool's schema, approval check answering allowed, timeout signal, then Tool.execute → McpConnection.callTool → the SDK ` +
          `Client.callTool with MCP_TOOL_TIMEOUT_MS and the signal → the result turned into Hearth's text); also ` +
          `\`Tool.execute\` of the same registry entry alone. Bare: an SDK Client (@modelcontextprotocol/sdk) of its own with a ` +
          `StdioClientTransport to a second fixture process (connected and tools listed in ${milliseconds(bareConnectMs, 0)}), ` +
          `\`client.callTool({name: 'echo', arguments: {text}})\`: the server's own time plus the SDK client and the pipe. ` +
          `Each timed from the call to its result, each result checked to be the text sent (${echoText.length} characters); ` +
          `the three interleaved in turn (the order rotated every round), ${warmUpCalls} warm-up rounds discarded, then ` +
          `${measuredCalls} measured. Hearth via executeToolCall ${spread(executor, 3)}, p99 ${milliseconds(percentile(executor, 0.99), 3)}; ` +
          `via Tool.execute ${medianAndP95(execute, 3)}, ${spread(execute, 3)}; bare ${spread(direct, 3)}, p99 ` +
          `${milliseconds(percentile(direct, 0.99), 3)}. Paired (each executeToolCall minus the bare call of the same round): ` +
          `median ${signed(median(paired))}, p95 ${signed(percentile(paired, 0.95))}.`,
      ],
    };
  } finally {
    await bare?.close().catch(() => undefined);
    await servers?.close().catch(() => undefined);
    abort.abort();
    await removeTemporaryDirectory(directory);
  }
}

// ——— (b) ten servers at start ———

interface Start {
  /** spawn → first 200 from /health. */
  startMs: number;
  /** The server's "Server listening" log line → the first 200 from /health: the part of start-up MCP could move. */
  afterListenMs: number;
  /** spawn → every server `connected` in GET /agents/tools; undefined without servers. */
  connectedMs?: number;
}

async function toolServers(server: ServerProcess): Promise<McpServerSummary[]> {
  const response = await fetch(`${server.baseUrl}/agents/tools`, { headers: server.headers, signal: AbortSignal.timeout(5_000) });
  if (response.status !== 200) throw new Error(`GET /agents/tools answered ${response.status}: ${(await response.text()).slice(0, 300)}`);
  return ((await response.json()) as { servers: McpServerSummary[] }).servers;
}

async function startOnce(directory: string, llmUrl: string, expected: number): Promise<Start> {
  const { server, startMs } = await ServerProcess.start({
    dataDir: directory,
    databaseFile: path.join(directory, 'hearth.db'),
    llmUrl,
    // At info the server logs the moment it listens (pino's epoch `time`), which splits start-up in two.
    environment: { TOOLS_DIR: path.join(directory, 'tools'), PROFILES_DIR: path.join(projectRoot, 'profiles'), LOG_LEVEL: 'info' },
  });
  const healthyAt = epochNow();
  try {
    const afterListenMs = healthyAt - listeningTime(server.recentOutput());
    if (expected === 0) {
      const servers = await toolServers(server);
      if (servers.length !== 0) throw new Error(`expected no MCP server, GET /agents/tools lists ${servers.length}`);
      return { startMs, afterListenMs };
    }
    const deadline = Date.now() + connectDeadlineMs;
    for (;;) {
      const servers = await toolServers(server);
      const connected = servers.filter((entry) => entry.status === 'connected').length;
      if (servers.length === expected && connected === expected) return { startMs, afterListenMs, connectedMs: startMs + (epochNow() - healthyAt) };
      const failed = servers.find((entry) => entry.status === 'failed');
      if (failed) throw new Error(`the MCP server ${failed.name} failed at start: ${failed.message ?? 'no message'}`);
      if (Date.now() > deadline) throw new Error(`${connected} of ${expected} MCP servers connected ${connectDeadlineMs / 1000} s after start`);
      await sleep(10);
    }
  } finally {
    await server.stop();
  }
}

/** The epoch time of Fastify's "Server listening at" line in the server's JSON log. */
function listeningTime(output: string): number {
  for (const line of output.split('\n')) {
    if (!line.includes('Server listening at')) continue;
    return (JSON.parse(line) as { time: number }).time;
  }
  throw new Error(`the server logged no "Server listening at" line: ${output.slice(-500)}`);
}

async function prepare(directory: string, servers: number): Promise<void> {
  const entries = Object.fromEntries(Array.from({ length: servers }, (_value, index) => [`fixture${String(index + 1).padStart(2, '0')}`, fixtureEntry()]));
  await writeFile(path.join(directory, 'mcp.json'), `${JSON.stringify({ mcpServers: entries }, null, 2)}\n`);
  // The database made (migrated) before the first timed start, so no start pays for it.
  const db = await openDatabase(path.join(directory, 'hearth.db'));
  await db.destroy();
}

export async function mcpServersAtStart(context: BenchContext): Promise<ScenarioResult> {
  const withServers = await makeTemporaryDirectory('hearth-bench-mcp-start-');
  const without = await makeTemporaryDirectory('hearth-bench-no-mcp-start-');
  try {
    await prepare(withServers, serverCount);
    await prepare(without, 0);
    const loaded: Start[] = [];
    const empty: Start[] = [];
    // Alternating, and in turned order each round (none, ten; ten, none; …), so a machine getting busier or quieter affects both alike.
    for (let round = 0; round < rounds; round++) {
      if (round % 2 === 0) {
        empty.push(await startOnce(without, context.llm.url, 0));
        loaded.push(await startOnce(withServers, context.llm.url, serverCount));
      } else {
        loaded.push(await startOnce(withServers, context.llm.url, serverCount));
        empty.push(await startOnce(without, context.llm.url, 0));
      }
    }
    const loadedStarts = loaded.map((start) => start.startMs);
    const emptyStarts = empty.map((start) => start.startMs);
    const connectedTimes = loaded.map((start) => start.connectedMs!);
    const differenceMs = median(loadedStarts) - median(emptyStarts);
    const loadedAfterListen = loaded.map((start) => start.afterListenMs);
    const emptyAfterListen = empty.map((start) => start.afterListenMs);
    const afterListenDifferenceMs = median(loadedAfterListen) - median(emptyAfterListen);
    const signed = (value: number) => `${value >= 0 ? '+' : '−'}${Math.abs(value).toFixed(0)} ms`;
    const pairedMs = loadedStarts.map((value, index) => value - emptyStarts[index]!);
    const list = (values: number[]) => values.map((value) => value.toFixed(0)).join(', ');
    return {
      rows: [
        {
          scenario: `20b. Start with ${serverCount} stdio MCP servers vs none: listening → first 200 from \`/health\``,
          measured:
            `${signed(afterListenDifferenceMs)} (median ${median(loadedAfterListen).toFixed(0)} ms vs ${median(emptyAfterListen).toFixed(0)} ms, ${rounds} starts each); ` +
            `spawn → first 200 ${signed(differenceMs)} (median ${median(loadedStarts).toFixed(0)} ms vs ${median(emptyStarts).toFixed(0)} ms)`,
          target: `< ${startBudgetMs} ms`,
          passed: afterListenDifferenceMs < startBudgetMs,
        },
        {
          scenario: `20c. Spawn → all ${serverCount} MCP servers connected`,
          measured: `median ${milliseconds(median(connectedTimes), 0)} (${list(connectedTimes)} ms)`,
          target: 'report only',
          passed: undefined,
        },
      ],
      details: [
        `MCP servers at start: two DATA_DIRs, each with its database made beforehand, one whose mcp.json lists ${serverCount} stdio ` +
          `servers (\`node test/support/mcp-fixture-server.mjs\`, each connecting and listing its 8 tools) and one whose mcp.json ` +
          `lists none (\`{"mcpServers": {}}\`); server processes started alternately (the order turned each round), ${rounds} of each, ` +
          `spawn → first 200 from /health (polled every 10 ms, as 5a), and the server's own "Server listening at" log line ` +
          `(LOG_LEVEL=info) → that first 200. MCP servers start only once the server listens, so the first part (loading ` +
          `modules, opening the database, profiles and tools; here ±300 ms from one start to the next) is the same code with or ` +
          `without them, and the target is judged on the second; the difference of medians is reported for both. After listening, ` +
          `ms with servers: ${list(loadedAfterListen)}; without: ${list(emptyAfterListen)}. Spawn → first 200 in ms, with ` +
          `servers: ${list(loadedStarts)}; without: ${list(emptyStarts)}; with − without within each round: ${pairedMs.map((value) => `${value >= 0 ? '+' : '−'}${Math.abs(value).toFixed(0)}`).join(', ')} (median ${median(pairedMs).toFixed(0)}). After /health answers, GET /agents/tools is polled every ` +
          `10 ms until its \`servers\` list all ${serverCount} as \`connected\` (a \`failed\` one ends the scenario), timed from spawn ` +
          `(20c); each server is stopped (SIGTERM, which ends its MCP children) before the next starts.`,
      ],
    };
  } finally {
    await removeTemporaryDirectory(withServers);
    await removeTemporaryDirectory(without);
  }
}
