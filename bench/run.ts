// `npm run bench`: the real server and the scripted LLM as two child processes, measured
// from this process over real WebSockets and fetch. Prints a table and writes bench/RESULTS.md.
//   --cpu-prof=DIR   also write a V8 CPU profile of the server process into DIR
//   --only=1,3,6     run only these scenarios (5, start and memory, always runs)
// Scenarios 6, 7 and 9 call real tools (ssh_exec, terminal, a user tool) in this process, not through the
// server; 8 and 10 start a server process of their own whose TOOLS_DIR is a temp folder they write to;
// 11 runs context compression in this process against a temp database; 14 runs the approval gate
// in this process against a temp database; 19 starts server processes of its own on databases with and
// without 1,000 schedules, and times the scheduler's due check in this process. 20 calls an MCP server's
// echo through McpServers in this process against a bare SDK client, and starts server processes of its own
// with 10 stdio MCP servers in mcp.json and with none. 21 starts a server process of its own on a database
// with 1,000 schedules due at once and times /health from here while they run. 22 starts a server process of
// its own against the Telegram Bot API stand-in, which runs in this process. 23 calls the filesystem tool in this
// process against a temp folder. 24 times the per-request check of a household (identify(), cookie or token → person → rights)
// in this process against a temp database. 25 starts a server process of its own that pulls a model through the Ollama
// stand-in, which runs in this process, and times each model_pull from the stand-in's line to the events socket here.
// 26 times turns through /v1/chat/completions (streamed and whole) beside WebSocket turns on the main server.
// 27 starts server processes of its own with STT and TTS pointed at the OpenAI audio stand-in, which runs in this process,
// and times speech end (a recording POSTed) to the first byte of the first sentence's audio.
// 28 indexes Markdown documents through the documents library in this process on a temp database; 29 searches a
// library of 100,000 passages written into a temp database, in this process, and (row 30) starts a process of its
// own that holds that library to read its RSS.
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { killRemainingChildren } from './child-processes.ts';
import { LlmProcess } from './llm-process.ts';
import { projectRoot } from './project-root.ts';
import { loadAverage, machineDescription, table, writeResults, type ReportRow, type ScenarioResult } from './report.ts';
import type { BenchContext } from './scenarios/bench-context.ts';
import { compressionBookkeeping } from './scenarios/compression.ts';
import { concurrentSessionCount, concurrentStreams } from './scenarios/concurrency.ts';
import { finalMemory, startAndMeasure } from './scenarios/start-and-memory.ts';
import { integrationsMemory } from './scenarios/integrations-memory.ts';
import { deltaThroughput } from './scenarios/throughput.ts';
import { freshSessionTurns, longSessionTurns } from './scenarios/turn-overhead.ts';
import { sshExecRoundTrips } from './scenarios/ssh-exec.ts';
import { terminalEchoRoundTrips } from './scenarios/terminal.ts';
import { userToolCalls } from './scenarios/user-tool-call.ts';
import { toolsChangedLatency } from './scenarios/tool-reload-latency.ts';
import { reloadMemory } from './scenarios/reload-memory.ts';
import { memorySearchTimes } from './scenarios/memory-search.ts';
import { pageInChromium } from './scenarios/page.ts';
import { approvalCheckTimes, normalisedApprovalCheckTimes } from './scenarios/approval-check.ts';
import { responsiveness } from './scenarios/responsiveness.ts';
import { checkpointCost } from './scenarios/checkpoint-cost.ts';
import { homeAssistantSearchTimes, stateChangedStorm } from './scenarios/smart-home.ts';
import { schedulesAtStart } from './scenarios/schedules-at-start.ts';
import { mcpEchoCalls, mcpServersAtStart } from './scenarios/mcp.ts';
import { scheduleStorm } from './scenarios/schedule-storm.ts';
import { telegramRoundTrips } from './scenarios/telegram.ts';
import { pathPolicyTimes } from './scenarios/path-policy.ts';
import { peopleCheckTimes } from './scenarios/people-check.ts';
import { modelPullLag } from './scenarios/model-pull.ts';
import { openAiTurnOverhead } from './scenarios/openai-turn-overhead.ts';
import { speechLatency } from './scenarios/speech-latency.ts';
import { documentIndexingThroughput, documentSearchAtScale } from './scenarios/documents.ts';
import { seedLongSession } from './seed-session.ts';
import type { ServerProcess } from './server-process.ts';
import { removeTemporaryDirectories } from './temporary-directories.ts';

const method =
  'The server runs as its own process (the node command of `npm start`: `node dist/main.js`, the esbuild bundle `npm run build` writes, rebuilt from src/ before the run; LOG_LEVEL=silent, a temp DATA_DIR, ' +
  'OLLAMA_NUM_CTX=524288 so that the seeded 2,000-message context of scenario 2 is sent whole, neither compressed nor cut to ' +
  'fit the window) against the scripted Ollama of test/support, which runs in a second child process ' +
  '(bench/scripted-llm-process.ts) and is told over IPC how to answer; the measuring client is a third process using ' +
  'real `ws` sockets and fetch, so no two parties share an event loop; the `/health` timings of scenarios 15, 18 and 21 come from a small process of ' +
  'their own (bench/health-prober-process.ts, node:http with one kept-alive socket), away from the bench process\'s heap and work. A turn is timed at the client from sending ' +
  '`{"type":"message"}` to receiving `stream_end`. The LLM process times each chat request from its headers arriving ' +
  '(node:diagnostics_channel `http.server.request.start`) to its response being flushed (`http.server.response.finish`) ' +
  'and reports it over IPC, tagged with the turn id it reads from the user message; server overhead = turn time − LLM ' +
  'time, so it includes both WebSocket hops, the database work, building and serialising the request, and parsing the ' +
  'stream. For chunk lag the LLM writes its send time (`performance.timeOrigin + performance.now()`) into each chunk and ' +
  'the client subtracts it from its receipt time, corrected by the clock offset between the two processes (measured over ' +
  'IPC, best of 50 round trips). The 2,000-message session is written into the database file before the server starts. ' +
  'Warm-up turns are discarded as noted below. RSS is VmRSS from /proc of the server\'s own node process. ' +
  'Scenarios 6 and 7 measure tools rather than turns: the bench process builds the real tool from src/ and times ' +
  '`execute()` directly (the server idles meanwhile); the SSH server of scenario 6 is a fourth process. Scenario 9 ' +
  'does the same with a user tool through the real host process (a child process under Node\'s permission model). Scenarios 8 and 10 start a second server ' +
  'process the same way (the first idles meanwhile) with TOOLS_DIR and PROFILES_DIR in a temp folder, write tool files ' +
  'there and wait for `tools_changed` on an open session socket; 10 reads that process\'s VmRSS. Scenario 11 runs ' +
  'context compression in the bench process on a temp SQLite database with a summariser that answers at once. Scenario 14 ' +
  'runs the approval gate in the bench process on a temp SQLite database. Scenario 15 times GET /health from the bench ' +
  'process while the server takes a 10 MB image and streams a 100 MB answer. Scenario 20a builds McpServers from src/ in the ' +
  'bench process (as 9 does the user-tool manager) and times its tool against a bare SDK client, each on its own MCP server ' +
  'child process; 20b starts further server processes whose DATA_DIR holds an mcp.json of 10 stdio MCP servers or of none.';

interface Options {
  cpuProfileDirectory?: string;
  only?: Set<number>;
}

function parseOptions(argumentsList: string[]): Options {
  const options: Options = {};
  for (const argument of argumentsList) {
    const [name, value] = argument.split('=', 2);
    if (name === '--cpu-prof' && value) options.cpuProfileDirectory = path.resolve(value);
    else if (name === '--only' && value) options.only = new Set(value.split(',').map(Number));
    else throw new Error(`unknown argument ${argument}; use --cpu-prof=DIR or --only=1,2,3,4,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29`);
  }
  return options;
}

function errorRow(scenario: string, error: unknown): ReportRow {
  const message = (error instanceof Error ? error.message : String(error)).split('\n', 1)[0];
  return { scenario, measured: `did not complete: ${message}`, target: '', passed: false };
}

async function main(): Promise<number> {
  const options = parseOptions(process.argv.slice(2));
  const dataDir = await mkdtemp(path.join(tmpdir(), 'hearth-bench-'));
  let llm: LlmProcess | undefined;
  let server: ServerProcess | undefined;
  let cleaning: Promise<void> | undefined;
  const cleanup = () =>
    (cleaning ??= (async () => {
      await server?.stop().catch(() => undefined);
      await llm?.stop().catch(() => undefined);
      // A server still starting (or anything else left) is not reachable through the objects above.
      killRemainingChildren();
      await rm(dataDir, { recursive: true, force: true });
      await removeTemporaryDirectories();
    })());
  let interrupted = false;
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      interrupted = true;
      console.error(`\n${signal}: stopping; bench/RESULTS.md is left as it was.`);
      void cleanup().finally(() => process.exit(130));
    });
  }

  const rows: ReportRow[] = [];
  const startRows: ReportRow[] = [];
  const details: string[] = [];
  let incomplete = false;
  const began = Date.now();
  const machine = machineDescription();
  try {
    console.log(machine);
    // `npm start` runs dist/: build it from the sources being measured, never a stale bundle.
    console.log('building dist/ (npm run build)…');
    await promisify(execFile)('npm', ['run', '--silent', 'build'], { cwd: projectRoot });
    llm = await LlmProcess.start();
    const clockOffset = await llm.measureClockOffset();
    console.log('seeding the 2,000-message session…');
    const databaseFile = path.join(dataDir, 'hearth.db');
    const seeded = await seedLongSession(databaseFile, 1_000);

    console.log('5. starting the server…');
    const started = await startAndMeasure({
      dataDir,
      databaseFile,
      llmUrl: llm.url,
      // Scenario 4 measures the event loop with 100 streams in flight: at the default of 2 the run
      // queue would hold 98 of them back (a 53 s wall), and it would time the queue instead.
      environment: { LLM_MAX_CONCURRENT: String(concurrentSessionCount) },
      ...(options.cpuProfileDirectory && { nodeFlags: ['--cpu-prof', `--cpu-prof-dir=${options.cpuProfileDirectory}`] }),
    });
    server = started.server;
    startRows.push(...started.rows);
    details.push(...started.details);
    for (const row of started.rows) console.log(`   ${row.scenario}: ${row.measured}`);
    if (!options.cpuProfileDirectory) {
      console.log('5d. idle RSS with the integrations configured…');
      try {
        const configured = await integrationsMemory({ server, llm, clockOffset });
        startRows.push(...configured.rows);
        details.push(...configured.details);
        for (const row of configured.rows) console.log(`   ${row.measured}`);
      } catch (error) {
        console.error('   5d failed:', error);
        startRows.push(errorRow('5d. Idle RSS with the integrations configured', error));
        incomplete = true;
      }
    }

    const context: BenchContext = { server, llm, clockOffset };
    const scenarios: [number, string, () => Promise<ScenarioResult>][] = [
      [1, '1. Turn overhead, fresh session', () => freshSessionTurns(context)],
      [2, '2. Turn overhead, 2,000-message session', () => longSessionTurns(context, seeded.sessionId, seeded.characters)],
      [3, '3. `stream_delta` throughput, one client', () => deltaThroughput(context)],
      [4, '4. 100 concurrent streams', () => concurrentStreams(context)],
      [6, '6. `ssh_exec` round trip, pooled vs fresh connection', () => sshExecRoundTrips()],
      [7, '7. `terminal` `echo` round trip', () => terminalEchoRoundTrips()],
      [8, '8. Tool file write → `tools_changed` at the client', () => toolsChangedLatency(context)],
      [9, '9. No-op user tool call through the host', () => userToolCalls()],
      [10, '10. 300 tool edit/reload cycles, server RSS', () => reloadMemory(context)],
      [11, '11. Compression bookkeeping, 5,000-message context', () => compressionBookkeeping()],
      [12, '12. `memory_search` over 10,000 facts', () => memorySearchTimes()],
      [13, '13. The page in Chromium', () => pageInChromium(context, databaseFile)],
      [14, '14. Approval check of an allowed call', () => approvalCheckTimes()],
      [14, '14b. Approval check of an allowed call, URL normalised', () => normalisedApprovalCheckTimes()],
      [15, '15. Other clients during a 10 MB message and a 100 MB answer', () => responsiveness(context)],
      [16, '16. Checkpointing cost at scenario 4’s shape', () => checkpointCost()],
      [17, '17. Home Assistant search over 2,000 entities', () => homeAssistantSearchTimes()],
      [18, '18. `/health` during a state_changed storm', () => stateChangedStorm(context)],
      [19, '19. 1,000 schedules: start-up and due check', () => schedulesAtStart(context)],
      [20, '20a. MCP echo call: Hearth vs a bare SDK client', () => mcpEchoCalls()],
      [20, '20b. 10 stdio MCP servers at start', () => mcpServersAtStart(context)],
      [21, '21. `/health` while 1,000 due schedules run', () => scheduleStorm(context)],
      [22, '22. Telegram round trip through the Bot API stand-in', () => telegramRoundTrips(context)],
      [23, '23. `filesystem` read and write under the path policy', () => pathPolicyTimes()],
      [24, '24. Per-request check: sign-in cookie → person → rights', () => peopleCheckTimes()],
      [25, '25. Model pull progress → `model_pull` at the client', () => modelPullLag()],
      [26, '26. Turn overhead: `/v1/chat/completions` beside the WebSocket', () => openAiTurnOverhead(context)],
      [27, '27. Speech end → first audio byte out', () => speechLatency(context)],
      [28, '28. Document indexing throughput, embedding excluded', () => documentIndexingThroughput()],
      [29, '29–30. Hybrid document search at 100,000 passages, and the RSS holding them', () => documentSearchAtScale()],
    ];
    for (const [number, name, run] of scenarios) {
      if (interrupted) break;
      if (options.only && !options.only.has(number)) continue;
      if (server.exited) {
        rows.push(errorRow(name, new Error(`the server process exited: ${server.recentOutput().slice(-500)}`)));
        incomplete = true;
        continue;
      }
      console.log(`${name}…`);
      const scenarioBegan = Date.now();
      try {
        const result = await run();
        rows.push(...result.rows);
        details.push(...result.details);
        for (const row of result.rows) console.log(`   ${row.measured} (${((Date.now() - scenarioBegan) / 1000).toFixed(1)} s)`);
      } catch (error) {
        if (interrupted) break;
        console.error(`   ${name} failed:`, error);
        rows.push(errorRow(name, error));
        incomplete = true;
      }
    }
    if (!server.exited) startRows.push(await finalMemory(server));
  } catch (error) {
    if (interrupted) return 130;
    console.error('bench setup failed:', error);
    rows.push(errorRow('setup', error));
    incomplete = true;
  } finally {
    await cleanup();
  }

  if (interrupted) return 130;
  // In scenario order (5, measured around the others, between 4 and 6); a setup failure last.
  const numberOf = (scenario: string) => Number.parseInt(scenario, 10) || Number.POSITIVE_INFINITY;
  const order = (row: ReportRow) => numberOf(row.scenario);
  const allRows = [...rows, ...startRows].sort((left, right) => order(left) - order(right));
  details.push(`Whole bench took ${((Date.now() - began) / 1000).toFixed(1)} s; load average (1 / 5 / 15 min) at the end: ${loadAverage()}.`);
  if (options.cpuProfileDirectory) details.push(`Server CPU profile written to ${options.cpuProfileDirectory}.`);
  console.log(`\n${table(allRows)}\n`);
  const misses = allRows.filter((row) => row.passed === false);
  if (misses.length === 0) console.log('All targets met.');
  else for (const row of misses) console.log(`MISSED: ${row.scenario}: ${row.measured} (target ${row.target || 'n/a'})`);
  const resultsFile = path.join(projectRoot, 'bench', 'RESULTS.md');
  const produced = new Set(allRows.map(order));
  // Scenario 5 always runs; a scenario may write rows under the next number (29 writes 30).
  const ran = (scenario: string) => {
    const number = numberOf(scenario);
    return options.only === undefined || !Number.isFinite(number) || number === 5 || options.only.has(number) || produced.has(number);
  };
  await writeResults(resultsFile, machine, allRows, method, details, ran);
  console.log(`Written to ${path.relative(process.cwd(), resultsFile)}.`);
  return incomplete ? 1 : 0;
}

process.exitCode = await main();
