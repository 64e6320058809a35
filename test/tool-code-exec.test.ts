import { spawnSync } from 'node:child_process';
import { mkdtemp, readFile, readdir, realpath, rm, writeFile, mkdir } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parseConfig } from '../src/config.ts';
import { createCodeExecTool } from '../src/tools/builtin/code-exec.ts';
import type { Tool, ToolContext } from '../src/tools/tool.ts';
import { withJail } from './support/jail.ts';
import { processHasEnded, readPid } from './support/processes.ts';
import { runTool } from './support/tool-context.ts';
import { waitUntil } from './support/wait-until.ts';

let directory: string;
let workFolder: string;
const pythonInstalled = spawnSync('python3', ['--version']).status === 0;

beforeEach(async () => {
  directory = await mkdtemp(path.join(os.tmpdir(), 'hearth-code-exec-'));
  workFolder = path.join(directory, 'session-1');
});

afterEach(async () => {
  await rm(directory, { recursive: true, force: true });
});

function codeExec(pythonExecutable?: string): Tool {
  // Unjailed, so the process ids a program writes are the ones the test signals (test/security/jail.test.ts runs it jailed).
  const config = parseConfig({ SESSION_FILES_DIR: directory, TERMINAL_ALLOWED_COMMANDS: 'ls,node,python3', JAIL: 'off' });
  return createCodeExecTool({ ...withJail(config), ...(pythonExecutable && { pythonExecutable }) });
}

function run(args: Record<string, unknown>, overrides?: Partial<ToolContext>) {
  return runTool(codeExec(), args, overrides);
}

async function leftoverCodeFiles(): Promise<string[]> {
  return readdir(path.join(workFolder, '.code-exec')).catch(() => []);
}

/** JavaScript that records its pid, prints a marker and then waits forever (it may start no processes of its own). */
const recordPidAndWait = `
import { writeFileSync } from 'node:fs';
console.log('marker');
writeFileSync('program.pid', process.pid + '\\n');
setInterval(() => {}, 1000);
`;

describe('code_exec in JavaScript', () => {
  it('runs a module in the work folder and reports its output', async () => {
    await mkdir(workFolder, { recursive: true });
    await writeFile(path.join(workFolder, 'data.txt'), 'from the work folder');
    const code = `import { readFileSync } from 'node:fs';
const answer = await Promise.resolve(6 * 7);
console.log(answer, process.cwd());
console.log(readFileSync('data.txt', 'utf8'));
console.error('a warning');`;
    const result = await run({ language: 'javascript', code });
    expect(result.success).toBe(true);
    expect(result.output).toContain(`Exit code 0`);
    expect(result.output).toContain(`stdout:\n42 ${await realpath(workFolder)}\nfrom the work folder\n`);
    expect(result.output).toContain('stderr:\na warning\n');
    expect(await leftoverCodeFiles()).toEqual([]);
  });

  it('reports an uncaught error as a failure and still removes its file', async () => {
    const result = await run({ language: 'javascript', code: 'console.log(process.argv[1]); throw new Error("broken on purpose");' });
    expect(result.success).toBe(false);
    expect(result.output).toContain('Exit code 1');
    expect(result.output).toContain('broken on purpose');
    const scriptPath = /stdout:\n(.+\.mjs)\n/.exec(result.output)?.[1];
    expect(scriptPath).toContain(path.join(workFolder, '.code-exec'));
    await expect(readFile(scriptPath!)).rejects.toThrow();
    expect(await leftoverCodeFiles()).toEqual([]);
  });

  it('keeps the head and the tail of long output', async () => {
    const result = await run({ language: 'javascript', code: 'for (let line = 1; line <= 100000; line++) console.log(line);' });
    expect(result.success).toBe(true);
    expect(result.output.length).toBeLessThan(20_500);
    expect(result.output).toContain('stdout:\n1\n2\n');
    expect(result.output).toContain('characters omitted');
    expect(result.output).toMatch(/99999\n100000\n$/);
  });

  it('kills the process on timeout, with the partial output', async () => {
    const result = await run({ language: 'javascript', code: recordPidAndWait, timeout_s: 1 });
    expect(result.success).toBe(false);
    expect(result.output).toContain('Timed out after 1 s');
    expect(result.output).toContain('stdout:\nmarker');
    const program = await readPid(path.join(workFolder, 'program.pid'));
    // SIGKILL lands asynchronously: give the kernel a moment, far less than the program would live.
    await waitUntil(() => processHasEnded(program!), 2_000);
    expect(await leftoverCodeFiles()).toEqual([]);
  });

  it('kills the process when stopped, with the partial output', async () => {
    const controller = new AbortController();
    const running = run({ language: 'javascript', code: recordPidAndWait }, { signal: controller.signal });
    const program = await waitUntil(() => readPid(path.join(workFolder, 'program.pid')));
    controller.abort();
    const result = await running;
    expect(result.success).toBe(false);
    expect(result.output).toContain('Stopped by the user');
    expect(result.output).toContain('stdout:\nmarker');
    // SIGKILL lands asynchronously: give the kernel a moment, far less than the program would live.
    await waitUntil(() => processHasEnded(program), 2_000);
    expect(await leftoverCodeFiles()).toEqual([]);
  });

  it('keeps its schema short and lets its own timeout govern', () => {
    const tool = codeExec();
    const { name, description, parameters } = tool;
    expect(JSON.stringify({ name, description, parameters }).length).toBeLessThan(600);
    expect(tool.timeoutMs).toBeGreaterThan(300_000);
  });
});

describe('code_exec in Python', () => {
  it.runIf(pythonInstalled)('runs a program in the work folder and reports errors with their traceback', async () => {
    const result = await run({ language: 'python', code: 'import os\nprint(sum(range(10)), os.getcwd())' });
    expect(result).toMatchObject({ success: true, output: expect.stringContaining(`stdout:\n45 ${await realpath(workFolder)}\n`) });

    const failed = await run({ language: 'python', code: 'print("before")\nraise ValueError("broken on purpose")' });
    expect(failed.success).toBe(false);
    expect(failed.output).toContain('Exit code 1');
    expect(failed.output).toContain('stdout:\nbefore');
    expect(failed.output).toContain('ValueError: broken on purpose');
    expect(await leftoverCodeFiles()).toEqual([]);
  });

  it.runIf(pythonInstalled)('keeps output printed before a timeout', async () => {
    const result = await run({ language: 'python', code: 'import time\nprint("started")\ntime.sleep(30)', timeout_s: 1 });
    expect(result.output).toContain('Timed out after 1 s');
    expect(result.output).toContain('stdout:\nstarted');
  });

  it.runIf(!pythonInstalled)('says python3 is missing and JavaScript is available', async () => {
    const result = await run({ language: 'python', code: 'print(1)' });
    expect(result).toMatchObject({ success: false, output: expect.stringContaining('python3 is not installed') });
  });

  it('says clearly when the Python interpreter is missing', async () => {
    const result = await runTool(codeExec('python3-not-installed-hearth'), { language: 'python', code: 'print(1)' });
    expect(result.success).toBe(false);
    expect(result.output).toContain('python3 is not installed');
    expect(result.output).toContain('JavaScript (Node.js) is available');
    expect(await leftoverCodeFiles()).toEqual([]);
  });
});
