// Scenario 10: 300 edit/reload cycles against a server process of its own (bench/tools-server.ts).
// Each cycle rewrites a helper module and the tool that imports it, and waits for the
// `tools_changed` that carries both new versions; the server's VmRSS is read before and after.
import { readdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { epochNow, sleep } from '../epoch-time.ts';
import type { ScenarioResult } from '../report.ts';
import { megabytes } from '../statistics.ts';
import { startToolsServer, type ToolsServer } from '../tools-server.ts';
import type { BenchContext } from './bench-context.ts';
import { medianAndP95 } from './tool-calls.ts';

const cycles = 300;
const budgetKilobytes = 30 * 1024;
const settleMs = 2_000;
/**
 * The server gives back what work grew once it has been quiet for 5 s (src/idle-memory-trim.ts),
 * as it had before the first cycle: growth is read against the same idle state.
 */
const trimmedSettleMs = 8_000;
const sampleEvery = 50;
/** One cycle normally takes a few hundred ms; this long means the watcher missed it or the reload hangs. */
const cycleWaitMs = 10_000;
/** All cycles together; past this the scenario fails rather than holding up the bench. */
const deadlineMs = 180_000;

const toolFile = 'churn.ts';
const helperFile = '_churn_helper.ts';

/** A helper with a version, a function and a table built when it is imported (in the host's worker). */
function helperSource(version: number): string {
  return [
    `export const helperVersion = ${version};`,
    `export const table = Array.from({ length: 1000 }, (_, index) => 'row ' + index + ' of version ${version}');`,
    'export function pick(index: number): string {',
    '  return table[index % table.length] ?? "";',
    '}',
    '',
  ].join('\n');
}

function toolSource(version: number): string {
  return [
    `import { helperVersion, pick } from './${helperFile}';`,
    `const version = ${version};`,
    'export const name = "churn";',
    'export const description = `churn version ${version}, helper version ${helperVersion}`;',
    'export const parameters = { type: "object", properties: { index: { type: "number" } }, required: [] };',
    'export const execute = async (params: { index?: number }) => pick(params.index ?? version);',
    '',
  ].join('\n');
}

const descriptionOf = (version: number) => `churn version ${version}, helper version ${version}`;

interface Sample {
  cycle: number;
  kilobytes: number;
  threads: number;
}

export async function reloadMemory(context: BenchContext): Promise<ScenarioResult> {
  let tools: ToolsServer | undefined;
  try {
    tools = await startToolsServer(context.llm.url, { [helperFile]: helperSource(0), [toolFile]: toolSource(0) });
    return await measure(tools);
  } finally {
    await tools?.stop();
  }
}

async function measure(tools: ToolsServer): Promise<ScenarioResult> {
  const { server } = tools;
  await sleep(settleMs);
  const sample = async (cycle: number): Promise<Sample> => ({ cycle, kilobytes: await server.residentKilobytes(), threads: await server.threads() });
  const before = await sample(0);
  const samples: Sample[] = [before];
  const cycleTimes: number[] = [];
  const eventsBefore = tools.toolsChangedEvents;
  const began = epochNow();
  const deadline = began + deadlineMs;

  for (let cycle = 1; cycle <= cycles; cycle++) {
    const remaining = deadline - epochNow();
    const where = `cycle ${cycle} of ${cycles} (after ${((epochNow() - began) / 1000).toFixed(1)} s)`;
    if (remaining <= 0) throw new Error(`${where}: the ${deadlineMs / 1000} s deadline for all cycles passed`);
    const description = descriptionOf(cycle);
    const startedAt = epochNow();
    try {
      const arrived = tools.awaitTools(
        (list) => list.some((tool) => tool.name === 'churn' && tool.description === description),
        Math.min(cycleWaitMs, remaining),
        `tools_changed with churn "${description}"`,
      );
      arrived.catch(() => undefined);
      // The helper first, then the tool: one burst, so usually one reload.
      await writeFile(path.join(tools.toolsDir, helperFile), helperSource(cycle));
      await writeFile(path.join(tools.toolsDir, toolFile), toolSource(cycle));
      cycleTimes.push((await arrived) - startedAt);
    } catch (error) {
      throw new Error(`${where}: ${(error as Error).message}${server.exited ? ' (the server process exited)' : ''}`);
    }
    if (cycle % sampleEvery === 0) samples.push(await sample(cycle));
  }
  const elapsedS = (epochNow() - began) / 1000;
  const reloadEvents = tools.toolsChangedEvents - eventsBefore;
  await sleep(settleMs);
  const settling = await sample(cycles);
  await sleep(trimmedSettleMs - settleMs);
  const after = await sample(cycles);
  const buildFolders = await readdir(path.join(tools.toolsDir, '.build')).catch(() => [] as string[]);

  const growth = after.kilobytes - before.kilobytes;
  const peak = Math.max(...samples.map((entry) => entry.kilobytes), settling.kilobytes, after.kilobytes);
  const trend = samples.map((entry) => `${entry.cycle}: ${megabytes(entry.kilobytes)}`).join(', ');
  return {
    rows: [
      {
        scenario: `10. ${cycles} tool edit/reload cycles: server RSS growth`,
        measured:
          `${growth >= 0 ? '+' : ''}${megabytes(growth)} (${megabytes(before.kilobytes)} → ${megabytes(after.kilobytes)}, peak ` +
          `${megabytes(peak)}; ${megabytes(settling.kilobytes)} ${settleMs / 1000} s after the last cycle); ${(cycles / elapsedS).toFixed(1)} reloads/s`,
        target: '< 30 MB',
        passed: growth < budgetKilobytes,
      },
    ],
    details: [
      `Edit/reload cycles: a server process of its own (as in scenario 8) with TOOLS_DIR holding churn.ts, which imports ` +
        `_churn_helper.ts (a helper: skipped as a tool for its leading underscore, bundled into churn by esbuild). Each ` +
        `cycle rewrites the helper (a new version constant and a 1,000-string table built at import) and then the tool ` +
        `(a new version constant; its description names both versions), and waits for the tools_changed on the open ` +
        `socket whose churn description names this cycle's versions, so each cycle is a completed reload of both ` +
        `files. RSS is VmRSS of the server's pid, read ${settleMs / 1000} s after the socket connected (before any ` +
        `reload, by when the server had given back what start-up grew) and ${trimmedSettleMs / 1000} s after the last cycle, ` +
        `once its idle trim (5 s of quiet) had run again; the reading ${settleMs / 1000} s after the last cycle is given ` +
        `beside it. No GC is forced from outside. ${cycles} cycles took ` +
        `${elapsedS.toFixed(1)} s (write → matching tools_changed ${medianAndP95(cycleTimes)}) and brought ` +
        `${reloadEvents} tools_changed events. RSS by cycle: ${trend}; ${settleMs / 1000} s after the last cycle ${megabytes(settling.kilobytes)}, ` +
        `${trimmedSettleMs / 1000} s after ${megabytes(after.kilobytes)}. ` +
        `Threads of the server process: ${before.threads} before, ${after.threads} after (each live host is one worker ` +
        `thread). TOOLS_DIR/.build holds ${buildFolders.length} folder(s) at the end (one per live generation).`,
    ],
  };
}
