// Scenario 9: a no-op user tool called through the real user-tool host (a child process), in
// this process: UserToolManager over a temp TOOLS_DIR, a temp SQLite database and a registry.
// Also, for scenario 8's breakdown, what one reload costs without any watcher.
import { mkdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { defaultToolTimeoutMs } from '../../src/agent/agent-loop.ts';
import { parseConfig } from '../../src/config.ts';
import { createLogger } from '../../src/logger.ts';
import { openDatabase, type Db } from '../../src/store/database.ts';
import { executeToolCall } from '../../src/tools/execute-tool-call.ts';
import type { Tool, ToolResult } from '../../src/tools/tool.ts';
import { ToolRegistry } from '../../src/tools/tool-registry.ts';
import { buildToolFiles, listToolFiles } from '../../src/tools/user-tools/build-tools.ts';
import { HostProcess } from '../../src/tools/user-tools/host-process.ts';
import { UserToolHost } from '../../src/tools/user-tools/user-tool-host.ts';
import { UserToolManager } from '../../src/tools/user-tools/user-tool-manager.ts';
import type { ScenarioResult } from '../report.ts';
import { median, milliseconds } from '../statistics.ts';
import { makeTemporaryDirectory, removeTemporaryDirectory } from '../temporary-directories.ts';
import { medianAndP95, spread, timedCall, toolContext, withDeadline } from './tool-calls.ts';
import { Jail } from '../../src/jail/jail.ts';

const warmUpCalls = 200;
const measuredCalls = 1_000;
const reloads = 15;
const budgetMs = 3;
/** The whole scenario normally takes about a second; past this something hangs. */
const deadlineMs = 60_000;

export const noopToolSource = [
  "export const name = 'noop';",
  "export const description = 'Does nothing and answers ok.';",
  "export const parameters = { type: 'object', properties: {}, required: [] };",
  "export const execute = async () => 'ok';",
  '',
].join('\n');

const answersOk = (result: ToolResult) => (result.output === 'ok' ? undefined : `expected "ok", got ${JSON.stringify(result.output)}`);

export async function userToolCalls(): Promise<ScenarioResult> {
  const directory = await makeTemporaryDirectory('hearth-bench-user-tool-');
  const abort = new AbortController();
  let db: Db | undefined;
  let manager: UserToolManager | undefined;
  let jail: Jail | undefined;
  try {
    return await withDeadline(
      (async () => {
        const toolsDir = path.join(directory, 'tools');
        await mkdir(toolsDir);
        await writeFile(path.join(toolsDir, 'noop.ts'), noopToolSource);
        db = await openDatabase(path.join(directory, 'hearth.db'));
        const registry = new ToolRegistry();
        const config = parseConfig({});
        // Jailed as in the server: the host runs under bubblewrap (a warm call does not start a process).
        jail = await Jail.create({ config, logger: { warn: () => undefined, info: () => undefined } });
        manager = new UserToolManager({ toolsDir, db, source: registry.addSource('user', 'user'), timeoutMs: config.USER_TOOL_TIMEOUT_MS, logger: createLogger('silent'), jail });
        const firstLoadStarted = performance.now();
        const report = await manager.reload();
        const firstLoadMs = performance.now() - firstLoadStarted;
        const entry = registry.get('noop');
        if (!entry || !report.loaded.includes('noop')) {
          throw new Error(`noop did not load: ${JSON.stringify(report.errors)}`);
        }
        return await measure(manager, registry, entry.tool, toolsDir, directory, firstLoadMs, defaultToolTimeoutMs, abort.signal);
      })(),
      deadlineMs,
      'the user-tool scenario',
    );
  } finally {
    abort.abort();
    await manager?.close().catch(() => undefined);
    jail?.close();
    await db?.destroy().catch(() => undefined);
    await removeTemporaryDirectory(directory);
  }
}

async function measure(
  manager: UserToolManager,
  registry: ToolRegistry,
  tool: Tool,
  toolsDir: string,
  directory: string,
  firstLoadMs: number,
  defaultTimeoutMs: number,
  signal: AbortSignal,
): Promise<ScenarioResult> {
  const context = toolContext('s', signal);

  // Direct: Tool.execute of the registry entry → UserToolManager.call → UserToolHost.call → host process → back.
  for (let call = 0; call < warmUpCalls; call++) await timedCall(tool, {}, context, answersOk);
  const direct: number[] = [];
  for (let call = 0; call < measuredCalls; call++) direct.push((await timedCall(tool, {}, context, answersOk)).milliseconds);

  // Through the executor, as the tool loop calls it: allow-list, argument validation, timeout signal.
  const options = { registry, allowedNames: ['noop'], context, defaultTimeoutMs, authorize: async () => ({ allowed: true as const }) };
  const viaExecutor = async () => {
    const startedAt = performance.now();
    const result = await executeToolCall({ name: 'noop', arguments: {} }, options);
    const elapsed = performance.now() - startedAt;
    const problem = result.success ? answersOk(result) : 'it failed';
    if (problem) throw new Error(`executeToolCall noop: ${problem}: ${result.output.slice(0, 300)}`);
    return elapsed;
  };
  for (let call = 0; call < warmUpCalls; call++) await viaExecutor();
  const executor: number[] = [];
  for (let call = 0; call < measuredCalls; call++) executor.push(await viaExecutor());

  // One reload without a watcher: UserToolManager.reload() (list, esbuild bundle, new host process, manifest, swap).
  const reloadTimes: number[] = [];
  for (let round = 0; round < reloads; round++) {
    const startedAt = performance.now();
    await manager.reload();
    reloadTimes.push(performance.now() - startedAt);
  }
  // Its two big parts, separately: esbuild bundling the tool, and a host process starting and importing it.
  const files = await listToolFiles(toolsDir);
  const buildTimes: number[] = [];
  const hostTimes: number[] = [];
  for (let round = 0; round < reloads; round++) {
    const outDir = path.join(directory, `build-${round}`);
    let startedAt = performance.now();
    const { modules } = await buildToolFiles(files, outDir);
    buildTimes.push(performance.now() - startedAt);
    startedAt = performance.now();
    const host = await UserToolHost.start({
      modules,
      kv: async () => undefined,
      loadTimeoutMs: 10_000,
      connect: (toLoad) => new HostProcess({ resourceLimits: { maxOldGenerationSizeMb: 128, maxYoungGenerationSizeMb: 16, stackSizeMb: 4 } }, toLoad),
    });
    hostTimes.push(performance.now() - startedAt);
    await host.terminate('bench');
    await rm(outDir, { recursive: true, force: true });
  }

  const directMedian = median(direct);
  return {
    rows: [
      {
        scenario: '9a. No-op user tool call through the host (`Tool.execute`)',
        measured: `${medianAndP95(direct, 3)}; ${measuredCalls} calls`,
        target: `median < ${budgetMs} ms`,
        passed: directMedian < budgetMs,
      },
      {
        scenario: '9b. Same, through `executeToolCall` (validation, timeout signal)',
        measured: `${medianAndP95(executor, 3)}; ${measuredCalls} calls`,
        target: 'report only',
        passed: undefined,
      },
    ],
    details: [
      `User-tool call: in the bench process, a UserToolManager (src/tools/user-tools/user-tool-manager.ts) over a temp ` +
        `TOOLS_DIR holding one no-op tool (\`execute = async () => 'ok'\`), a temp SQLite database (openDatabase), a ` +
        `ToolRegistry and createLogger('silent'); after \`reload()\` (first load ${milliseconds(firstLoadMs)}), ` +
        `\`registry.get('noop').tool.execute({}, ctx)\` is timed from the call to its result, each checked to answer "ok": ` +
        `${warmUpCalls} warm-up calls, then ${measuredCalls} measured, ${spread(direct, 3)}. Each call is one JSON line to the ` +
        `host's child process over its pipe (fd 3) and a result line back. Through executeToolCall (src/tools/execute-tool-call.ts, ` +
        `allowedNames ['noop']): the same counts, ${spread(executor, 3)}.`,
      `Reload without a watcher (for scenario 8): \`UserToolManager.reload()\` with the one tool, ${reloads} times: ` +
        `${medianAndP95(reloadTimes)}; of which esbuild bundling (buildToolFiles, src/tools/user-tools/build-tools.ts) ` +
        `${medianAndP95(buildTimes)} and a host process starting and importing the bundle to its manifest ` +
        `(UserToolHost.start, src/tools/user-tools/user-tool-host.ts) ${medianAndP95(hostTimes)}, each timed alone.`,
    ],
  };
}
