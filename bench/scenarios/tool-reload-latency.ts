// Scenario 8: a tool file written into TOOLS_DIR → `tools_changed` at a client's WebSocket, against a
// server process of its own (bench/tools-server.ts): the watcher, the reload and the broadcast.
import { unlink } from 'node:fs/promises';
import path from 'node:path';
import { sleep } from '../epoch-time.ts';
import type { ScenarioResult } from '../report.ts';
import { median } from '../statistics.ts';
import { startToolsServer, type ToolsServer } from '../tools-server.ts';
import type { BenchContext } from './bench-context.ts';
import { medianAndP95, spread } from './tool-calls.ts';

const warmUpWrites = 3;
const rewrites = 30;
const newFiles = 10;
const budgetMs = 300;
/** A wait this long means the watcher missed the write (or the reload hangs). */
const waitMs = 5_000;
/** Quiet time between samples, so a late second watcher event of one write cannot land in the next sample. */
const gapMs = 250;

export function toolSource(name: string, description: string, body = "async () => 'ok'"): string {
  return [
    `export const name = ${JSON.stringify(name)};`,
    `export const description = ${JSON.stringify(description)};`,
    "export const parameters = { type: 'object', properties: {}, required: [] };",
    `export const execute = ${body};`,
    '',
  ].join('\n');
}

export async function toolsChangedLatency(context: BenchContext): Promise<ScenarioResult> {
  let tools: ToolsServer | undefined;
  try {
    tools = await startToolsServer(context.llm.url, { 'probe.ts': toolSource('probe', 'probe version 0') });
    return await measure(tools);
  } finally {
    await tools?.stop();
  }
}

async function measure(tools: ToolsServer): Promise<ScenarioResult> {
  let version = 0;
  const rewrite = async (what: string) => {
    version++;
    const description = `probe version ${version}`;
    try {
      return await tools.writeAndAwait('probe.ts', toolSource('probe', description), 'probe', description, waitMs);
    } catch (error) {
      throw new Error(`${what}: ${(error as Error).message}${tools.server.exited ? ' (the server process exited)' : ''}`);
    }
  };

  for (let write = 0; write < warmUpWrites; write++) {
    await rewrite(`warm-up rewrite ${write + 1}`);
    await sleep(gapMs);
  }
  const eventsBefore = tools.toolsChangedEvents;
  const rewriteLatencies: number[] = [];
  for (let sample = 0; sample < rewrites; sample++) {
    rewriteLatencies.push(await rewrite(`rewrite ${sample + 1} of ${rewrites}`));
    await sleep(gapMs);
  }
  const rewriteEvents = tools.toolsChangedEvents - eventsBefore;

  // A new file appearing, then (untimed for the table) removed again so the tool count stays at one.
  const newFileLatencies: number[] = [];
  const removalLatencies: number[] = [];
  for (let sample = 0; sample < newFiles; sample++) {
    const name = `fresh_${sample}`;
    const description = `fresh tool ${sample}`;
    try {
      newFileLatencies.push(await tools.writeAndAwait(`${name}.ts`, toolSource(name, description), name, description, waitMs));
      await sleep(gapMs);
      const gone = tools.awaitTools((list) => !list.some((tool) => tool.name === name), waitMs, `tools_changed without ${name}`);
      gone.catch(() => undefined);
      const removedAt = performance.timeOrigin + performance.now();
      await unlink(path.join(tools.toolsDir, `${name}.ts`));
      removalLatencies.push((await gone) - removedAt);
      await sleep(gapMs);
    } catch (error) {
      throw new Error(`new file ${sample + 1} of ${newFiles}: ${(error as Error).message}`);
    }
  }

  const rewriteMedian = median(rewriteLatencies);
  return {
    rows: [
      {
        scenario: '8a. Tool file rewritten → `tools_changed` at the client',
        measured: `${medianAndP95(rewriteLatencies)}; ${rewrites} writes`,
        target: `median < ${budgetMs} ms`,
        passed: rewriteMedian < budgetMs,
      },
      {
        scenario: '8b. New tool file → `tools_changed` at the client',
        measured: `${medianAndP95(newFileLatencies)}; ${newFiles} files`,
        target: 'report only',
        passed: undefined,
      },
    ],
    details: [
      `File write → tools_changed: a server process of its own (\`npm start\`'s node command, LOG_LEVEL=silent) with ` +
        `TOOLS_DIR and PROFILES_DIR (a copy of profiles/) in a temp folder, one session created with POST /sessions and ` +
        `one \`ws\` socket open on /ws/sessions/<id>. A sample is timed in the bench process from just before ` +
        `fs.writeFile of TOOLS_DIR/probe.ts to the receipt of the first tools_changed whose \`probe\` tool carries the ` +
        `description just written (so an event from an earlier write never counts); ${warmUpWrites} warm-up writes ` +
        `discarded, ${gapMs} ms of quiet between samples. Rewrites: ${spread(rewriteLatencies)}; the ${rewrites} ` +
        `writes brought ${rewriteEvents} tools_changed events. New files (fresh_<n>.ts, each removed again after its ` +
        `sample): ${spread(newFileLatencies)}; removal → tools_changed without it ${medianAndP95(removalLatencies)}. ` +
        `The path: chokidar's event, awaitWriteFinish and the debounce of src/server/watchers.ts, then ` +
        `UserToolManager.reload() (esbuild bundle, a new worker importing it, registry swap; its in-process cost is ` +
        `under scenario 9) and Agent.announceTools (tools_changed).`,
    ],
  };
}
