// Scenario 23: a `filesystem` read and write under the path policy (src/tools/host-files/), in this
// process, as the server runs a call: the precheck (Hearth's places refused before any question),
// mustAsk (writes outside the session's folder, places that run code later) and the call itself,
// each deciding on the real path and identities and opening the file through a checked descriptor.
// The session folder lives inside the working folder as in the default layout (./session-files),
// so every decision walks past Hearth's own folders. Beside it: the same read and write with bare
// node:fs calls, which is what the policy adds to.
import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { parseConfig } from '../../src/config.ts';
import { createFilesystemTool } from '../../src/tools/builtin/filesystem.ts';
import type { ToolContext } from '../../src/tools/tool.ts';
import type { ScenarioResult } from '../report.ts';
import { median, percentile } from '../statistics.ts';
import { makeTemporaryDirectory, removeTemporaryDirectory } from '../temporary-directories.ts';
import { toolContext } from './tool-calls.ts';

const calls = 2_000;
const warmUp = 200;
const budgetMs = 10;
const fileBytes = 4_096;

async function timed(count: number, call: (index: number) => Promise<unknown>): Promise<number[]> {
  const times: number[] = [];
  for (let index = 0; index < warmUp + count; index++) {
    const started = performance.now();
    await call(index);
    const elapsed = performance.now() - started;
    if (index >= warmUp) times.push(elapsed);
  }
  return times;
}

const describe = (times: number[]) => `median ${median(times).toFixed(3)} ms (p95 ${percentile(times, 0.95).toFixed(3)} ms, p99 ${percentile(times, 0.99).toFixed(3)} ms)`;

export async function pathPolicyTimes(): Promise<ScenarioResult> {
  const working = await makeTemporaryDirectory('hearth-bench-path-policy-');
  try {
    const config = parseConfig({
      DATA_DIR: path.join(working, 'data'),
      SESSION_FILES_DIR: path.join(working, 'session-files'),
      PROFILES_DIR: path.join(working, 'profiles'),
      TOOLS_DIR: path.join(working, 'user-tools'),
      MANUALS_DIR: path.join(working, 'manuals'),
    });
    const tool = createFilesystemTool({ config, workingFolder: working });
    const context: ToolContext = toolContext('bench-session', new AbortController().signal);
    const own = path.join(working, 'session-files', 'bench-session');
    await fs.mkdir(path.join(own, 'notes'), { recursive: true });
    const content = randomBytes(fileBytes / 2).toString('hex');
    await fs.writeFile(path.join(own, 'notes', 'source.md'), content);

    const run = async (args: { action: 'read' | 'write'; path: string; content?: string }) => {
      const refused = await tool.precheck?.(args, context);
      if (refused !== undefined) throw new Error(refused);
      const asked = await tool.mustAsk?.(args, context);
      if (asked !== undefined) throw new Error(`asked: ${asked}`);
      const output = await tool.execute(args, context);
      if (typeof output !== 'string') throw new Error(output.output);
    };
    const reads = await timed(calls, () => run({ action: 'read', path: 'notes/source.md' }));
    const writes = await timed(calls, (index) => run({ action: 'write', path: `notes/out-${index % 50}.md`, content }));
    const bareReads = await timed(calls, () => fs.readFile(path.join(own, 'notes', 'source.md'), 'utf8'));
    const bareWrites = await timed(calls, (index) => fs.writeFile(path.join(own, 'notes', `bare-${index % 50}.md`), content));
    const readMedian = median(reads);
    const writeMedian = median(writes);
    return {
      rows: [
        { scenario: '23a. `filesystem` read under the path policy', measured: describe(reads), target: `median < ${budgetMs} ms`, passed: readMedian < budgetMs },
        { scenario: '23b. `filesystem` write under the path policy', measured: describe(writes), target: `median < ${budgetMs} ms`, passed: writeMedian < budgetMs },
      ],
      details: [
        `23. Path policy: the filesystem tool's precheck, mustAsk and execute for a ${fileBytes.toLocaleString('en')}-byte file in the session's folder (inside the working folder, as ./session-files is by default), ${calls.toLocaleString('en')} calls each after ${warmUp} warm-up calls; a write replaces one of 50 files. Bare node:fs for the same work: read ${describe(bareReads)}, write ${describe(bareWrites)}.`,
      ],
    };
  } finally {
    await removeTemporaryDirectory(working);
  }
}
