import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, readFile, realpath, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as realDelay } from 'node:timers/promises';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { parseConfig } from '../src/config.ts';
import { createTerminalTool, splitCommandLine } from '../src/tools/builtin/terminal.ts';
import { OutputCapture } from '../src/tools/output-capture.ts';
import { findMarkedProcesses, hearthInstance, parseProcessMarker, processMarkerVariable } from '../src/tools/process-markers.ts';
import { runProcess } from '../src/tools/process-runner.ts';
import type { Tool } from '../src/tools/tool.ts';
import { processHasEnded, readPid } from './support/processes.ts';
import { runTool } from './support/tool-context.ts';
import { waitUntil } from './support/wait-until.ts';
import { withJail } from './support/jail.ts';

let directory: string;
let workFolder: string;

beforeEach(async () => {
  directory = await mkdtemp(path.join(os.tmpdir(), 'hearth-terminal-'));
  workFolder = path.join(directory, 'session-1');
});

const strays: number[] = [];

afterEach(async () => {
  // Only what a failing test left behind: a passing one has nothing running here.
  for (const pid of strays.splice(0)) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // Ended.
    }
  }
  await rm(directory, { recursive: true, force: true });
});

// These tests read process ids the commands write and signal them from outside: they run unjailed
// (JAIL=off), where the process group and the markers are all that ends a call's processes.
// test/security/jail.test.ts shows the same calls jailed, where the PID namespace ends everything.
function terminal(allowedCommands = '*', killGraceMs?: number): Tool {
  return createTerminalTool({ ...withJail(parseConfig({ SESSION_FILES_DIR: directory, TERMINAL_ALLOWED_COMMANDS: allowedCommands, JAIL: 'off' })), killGraceMs });
}

/** Between SIGTERM and SIGKILL where a test waits for the escalation (the 2 s default: 'waits 2 s after SIGTERM …'). */
const shortKillGraceMs = 200;

describe('terminal with a shell', () => {
  it('reports stdout, stderr and the exit code', async () => {
    const ok = await runTool(terminal(), { command: 'echo hello; echo careful >&2' });
    expect(ok.success).toBe(true);
    expect(ok.output).toMatch(/^Exit code 0 in \d+\.\d\d s\.\nstdout:\nhello\n\nstderr:\ncareful\n$/);

    const failed = await runTool(terminal(), { command: 'echo oops >&2; exit 3' });
    expect(failed.success).toBe(false);
    expect(failed.output).toContain('Exit code 3');
    expect(failed.output).toContain('oops');
    expect(failed.output).not.toContain('stdout:');

    expect((await runTool(terminal(), { command: 'true' })).output).toContain('(no output)');
  });

  it('runs in the session work folder by default, or in cwd relative to it', async () => {
    const plain = await runTool(terminal(), { command: 'pwd' });
    expect(plain.output).toContain(`stdout:\n${await realpath(workFolder)}\n`);

    await mkdir(path.join(workFolder, 'project'));
    const nested = await runTool(terminal(), { command: 'pwd', cwd: 'project' });
    expect(nested.output).toContain(`${await realpath(path.join(workFolder, 'project'))}\n`);

    const absolute = await runTool(terminal(), { command: 'pwd', cwd: path.join(workFolder, 'project') });
    expect(absolute.output).toContain(`${await realpath(path.join(workFolder, 'project'))}\n`);
    // SESSION_FILES_DIR itself holds every session's folder: never a cwd (the path policy).
    expect(await runTool(terminal(), { command: 'pwd', cwd: directory })).toMatchObject({ success: false, output: expect.stringContaining('SESSION_FILES_DIR') });

    const missing = await runTool(terminal(), { command: 'pwd', cwd: 'nowhere' });
    expect(missing).toMatchObject({ success: false, output: expect.stringContaining('cwd "nowhere" does not exist') });
  });

  it('keeps the head and the tail of long output', async () => {
    const result = await runTool(terminal(), { command: 'seq 1 200000' });
    expect(result.success).toBe(true);
    expect(result.output.length).toBeLessThan(20_500);
    expect(result.output).toContain('stdout:\n1\n2\n3\n');
    expect(result.output).toMatch(/199999\n200000\n$/);
    const total = Array.from({ length: 200_000 }, (_, index) => `${index + 1}\n`).join('').length;
    expect(result.output).toContain(`… [${total - 20_000} characters omitted] …`);
  });

  it('kills the whole process group on timeout and returns the partial output', async () => {
    const pidFile = path.join(workFolder, 'grandchild.pid');
    const result = await runTool(terminal(), { command: 'echo started; sleep 30 & echo $! > grandchild.pid; wait', timeout_s: 1 });
    expect(result.success).toBe(false);
    expect(result.output).toContain('Timed out after 1 s');
    expect(result.output).toContain('stdout:\nstarted');
    const grandchild = await readPid(pidFile);
    expect(grandchild).toBeDefined();
    // SIGKILL lands asynchronously: give the kernel a moment, far less than the command would live.
    await waitUntil(() => processHasEnded(grandchild!), 2_000);
  });

  it('escalates to SIGKILL when the group ignores SIGTERM', async () => {
    const started = Date.now();
    const result = await runTool(terminal('*', shortKillGraceMs), { command: "trap '' TERM; sleep 30 & echo $! > stubborn.pid; wait", timeout_s: 1 });
    expect(result.output).toContain('Timed out');
    expect(Date.now() - started).toBeLessThan(8_000);
    const stubborn = await readPid(path.join(workFolder, 'stubborn.pid'));
    // SIGKILL lands asynchronously: give the kernel a moment, far less than the command would live.
    await waitUntil(() => processHasEnded(stubborn!), 2_000);
  });

  it('kills the whole process group when stopped and returns the partial output', async () => {
    const controller = new AbortController();
    const pidFile = path.join(workFolder, 'grandchild.pid');
    const running = runTool(terminal(), { command: 'echo marker; sleep 30 & echo $! > grandchild.pid; wait' }, { signal: controller.signal });
    const grandchild = await waitUntil(() => readPid(pidFile));
    const stoppedAt = Date.now();
    controller.abort();
    const result = await running;
    expect(Date.now() - stoppedAt).toBeLessThan(1_500);
    expect(result.success).toBe(false);
    expect(result.output).toContain('Stopped by the user');
    expect(result.output).toContain('stdout:\nmarker');
    // SIGKILL lands asynchronously: give the kernel a moment, far less than the command would live.
    await waitUntil(() => processHasEnded(grandchild), 2_000);
  });

  it('does not start anything when already stopped', async () => {
    const controller = new AbortController();
    controller.abort();
    const result = await runTool(terminal(), { command: 'touch created' }, { signal: controller.signal });
    expect(result).toMatchObject({ success: false, output: expect.stringContaining('Stopped by the user') });
    await expect(readFile(path.join(workFolder, 'created'))).rejects.toThrow();
  });

  it('keeps its schema short and lets its own timeout govern', () => {
    const tool = terminal();
    const { name, description, parameters } = tool;
    expect(JSON.stringify({ name, description, parameters }).length).toBeLessThan(600);
    expect(tool.timeoutMs).toBeGreaterThan(600_000);
  });
});

describe('terminal with an allowlist', () => {
  const allowed = 'echo,printf,ls,pwd,definitely-not-installed-hearth';

  it('runs an allowed command without a shell', async () => {
    const result = await runTool(terminal(allowed), { command: 'echo hello world' });
    expect(result).toMatchObject({ success: true, output: expect.stringContaining('stdout:\nhello world\n') });
    expect(terminal(allowed).description).toContain('allowed: echo, printf, ls, pwd');
  });

  it('refuses an executable that is not allowed, listing the allowed ones', async () => {
    const result = await runTool(terminal(allowed), { command: 'rm -rf project' });
    expect(result.success).toBe(false);
    expect(result.output).toContain('"rm" is not an allowed command');
    expect(result.output).toContain('Allowed executables: echo, printf, ls, pwd, definitely-not-installed-hearth.');
  });

  it('refuses shell operators, expansions and newlines', async () => {
    for (const command of ['echo a | cat', 'echo a > file', 'echo a; rm b', 'echo a && echo b', 'echo $HOME', 'echo `id`', 'echo "$HOME"', 'echo (a)', 'echo a\necho b']) {
      const result = await runTool(terminal(allowed), { command });
      expect(result.success, command).toBe(false);
      expect(result.output, command).toContain('without a shell');
      expect(result.output, command).toContain('Allowed executables: echo');
    }
    expect((await runTool(terminal(allowed), { command: 'ls *.txt' })).output).toContain('wildcard');
    expect((await runTool(terminal(allowed), { command: 'ls ~/x' })).output).toContain('"~" is not expanded');
  });

  it('accepts the path to an allowed binary on PATH but not a look-alike script', async () => {
    const accepted = await runTool(terminal(allowed), { command: '/bin/echo via path' });
    expect(accepted).toMatchObject({ success: true, output: expect.stringContaining('via path') });

    await mkdir(workFolder, { recursive: true });
    await writeFile(path.join(workFolder, 'echo'), '#!/bin/sh\necho impostor\n');
    await chmod(path.join(workFolder, 'echo'), 0o755);
    const refused = await runTool(terminal(allowed), { command: './echo hi' });
    expect(refused).toMatchObject({ success: false, output: expect.stringContaining('not in a folder on PATH') });
  });

  it('passes quoted and escaped words through unchanged', async () => {
    const result = await runTool(terminal(allowed), { command: `printf '[%s]' 'a b' "c \\"d\\" \\$" e\\ f '' 'x|y;z' "it's"` });
    expect(result.output).toContain('stdout:\n[a b][c "d" $][e f][][x|y;z][it\'s]');
    expect((await runTool(terminal(allowed), { command: "echo 'open" })).output).toContain('unterminated single quote');
  });

  it('reports a command that is not installed', async () => {
    const result = await runTool(terminal(allowed), { command: 'definitely-not-installed-hearth --version' });
    expect(result).toMatchObject({ success: false, output: expect.stringContaining('Command not found: "definitely-not-installed-hearth"') });
  });
});

describe('splitCommandLine', () => {
  it('splits words like a shell does for quotes and backslashes', () => {
    expect(splitCommandLine('  git   log  --oneline ')).toEqual({ words: ['git', 'log', '--oneline'] });
    expect(splitCommandLine(`a'b'"c"\\ d "\\q" '\\n'`)).toEqual({ words: ['abc d', '\\q', '\\n'] });
    expect(splitCommandLine('find . -name "*.ts" -exec wc -l {} \\;')).toEqual({ words: ['find', '.', '-name', '*.ts', '-exec', 'wc', '-l', '{}', ';'] });
    expect(splitCommandLine('git log HEAD~1')).toEqual({ words: ['git', 'log', 'HEAD~1'] });
    expect(splitCommandLine('   ')).toEqual({ refusal: 'The command is empty.' });
    expect(splitCommandLine('echo \\')).toHaveProperty('refusal');
    expect(splitCommandLine('echo "open')).toHaveProperty('refusal');
  });
});

describe('process runner', () => {
  it('holds a bounded head and tail of any amount of output and counts what it dropped', () => {
    const capture = new OutputCapture(100);
    const text = Array.from({ length: 5_000 }, (_, index) => `line ${index}\n`).join('');
    for (let offset = 0; offset < text.length; offset += 7) capture.append(text.slice(offset, offset + 7));
    expect(capture.render(40)).toBe(`${text.slice(0, 20)}\n… [${text.length - 40} characters omitted] …\n${text.slice(-20)}`);
    expect(capture.render(100)).toBe(`${text.slice(0, 50)}\n… [${text.length - 100} characters omitted] …\n${text.slice(-50)}`);
    const short = new OutputCapture(100);
    short.append('complete');
    expect(short.render(100)).toBe('complete');
  });

  it('waits 2 s after SIGTERM before SIGKILL by default', async () => {
    // Only the timers are fake: the process is real, and ignores SIGTERM.
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    try {
      const pidFile = path.join(directory, 'stubborn.pid');
      const running = runProcess({ executable: 'sh', args: ['-c', `trap '' TERM; echo $$ > ${pidFile}; exec sleep 30`], cwd: directory, timeoutMs: 1_000 });
      let pid: number | undefined;
      while (pid === undefined) {
        await new Promise((resolve) => setImmediate(resolve));
        pid = await readPid(pidFile);
      }
      strays.push(pid);
      await vi.advanceTimersByTimeAsync(1_000);
      await vi.advanceTimersByTimeAsync(1_999);
      // A moment of real time, for a SIGKILL sent too early to have landed.
      await realDelay(100);
      expect(processHasEnded(pid)).toBe(false);
      await vi.advanceTimersByTimeAsync(1);
      // SIGKILL is on its way; the result follows once the pipes close.
      const result = await running;
      expect(result).toMatchObject({ timedOut: true, signal: 'SIGKILL' });
      expect(processHasEnded(pid)).toBe(true);
    } finally {
      vi.useRealTimers();
    }
  });

  it('feeds stdin and reports a missing executable as data', async () => {
    const echoed = await runProcess({ executable: 'cat', args: [], cwd: directory, stdin: 'from stdin', timeoutMs: 5_000 });
    expect(echoed).toMatchObject({ exitCode: 0, stdout: 'from stdin', stderr: '', timedOut: false, aborted: false });
    const missing = await runProcess({ executable: 'definitely-not-installed-hearth', args: [], cwd: directory, timeoutMs: 5_000 });
    expect(missing).toMatchObject({ exitCode: null, spawnError: { code: 'ENOENT' } });
  });
});

describe('processes that leave the process group', () => {
  /** A terminal whose DATA_DIR is this test's own folder, so ending a session's or all processes touches no other test's. */
  function isolatedTerminal(killGraceMs?: number): Tool {
    return createTerminalTool({ ...withJail(parseConfig({ DATA_DIR: directory, SESSION_FILES_DIR: directory, JAIL: 'off' })), killGraceMs });
  }

  /** The pid a command wrote to `name` in a work folder, remembered for clean-up if the test fails. */
  async function pidFrom(name: string, folder = workFolder): Promise<number> {
    const pid = await waitUntil(() => readPid(path.join(folder, name)));
    strays.push(pid);
    return pid;
  }

  /** Live processes carrying a marker of this test's installation. */
  async function markedHere(sessionId?: string): Promise<number[]> {
    const instance = hearthInstance(directory);
    const found = await findMarkedProcesses((marker) => {
      const parsed = parseProcessMarker(marker);
      return parsed?.instance === instance && (sessionId === undefined || parsed.sessionId === sessionId);
    });
    return found!.map((process) => process.pid);
  }

  it('a stop also ends a child that called setsid and a double-forked one, before the call returns', async () => {
    const controller = new AbortController();
    const command =
      "setsid sh -c 'echo $$ > escaper.pid; sleep 30; touch escaped' & " +
      "(setsid sh -c 'echo $$ > double.pid; sleep 30; touch escaped-twice' > /dev/null 2>&1 &); " +
      'sleep 30';
    const running = runTool(isolatedTerminal(), { command }, { signal: controller.signal });
    const escaper = await pidFrom('escaper.pid');
    const doubleForked = await pidFrom('double.pid');
    // They really left: their own sessions and groups, out of reach of the group kill.
    for (const pid of [escaper, doubleForked]) {
      const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
      const [, , group, session] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      expect(Number(group)).toBe(pid);
      expect(Number(session)).toBe(pid);
    }
    controller.abort();
    const result = await running;
    expect(result.output).toContain('Stopped by the user');
    expect(processHasEnded(escaper)).toBe(true);
    expect(processHasEnded(doubleForked)).toBe(true);
    expect(await markedHere()).toEqual([]);
    expect(existsSync(path.join(workFolder, 'escaped'))).toBe(false);
    expect(existsSync(path.join(workFolder, 'escaped-twice'))).toBe(false);
  });

  it('a timeout ends a setsid child too, even one that ignores SIGTERM', async () => {
    const command = "setsid sh -c \"trap '' TERM; echo \\$\\$ > escaper.pid; sleep 30; touch escaped\" & sleep 30";
    const result = await runTool(isolatedTerminal(shortKillGraceMs), { command, timeout_s: 1 });
    expect(result.output).toContain('Timed out after 1 s');
    const escaper = (await readPid(path.join(workFolder, 'escaper.pid')))!;
    expect(escaper).toBeDefined();
    expect(processHasEnded(escaper)).toBe(true);
    expect(await markedHere()).toEqual([]);
  });

  it('every process a call starts carries its own marker; stopping one call leaves another call of the session alone', async () => {
    const tool = isolatedTerminal();
    const printed = await runTool(tool, { command: `echo "$${processMarkerVariable}"` });
    const marker = parseProcessMarker(printed.output.split('stdout:\n')[1]!.trim());
    expect(marker).toMatchObject({ instance: hearthInstance(directory), sessionId: 'session-1', callId: expect.stringMatching(/^[0-9a-f]{12}$/) });

    // A background job another call of the same session left running (a sub-agent's, say).
    const background = await runTool(tool, { command: "setsid sh -c 'echo $$ > background.pid; exec sleep 30' > /dev/null 2>&1 &" });
    expect(background.success).toBe(true);
    const survivor = await pidFrom('background.pid');

    const controller = new AbortController();
    const running = runTool(tool, { command: "setsid sh -c 'echo $$ > stopped.pid; exec sleep 30' & sleep 30" }, { signal: controller.signal });
    const stopped = await pidFrom('stopped.pid');
    controller.abort();
    await running;
    // Killed by its marker; the kernel ends it a moment after the signal, on a busy machine later.
    await waitUntil(() => processHasEnded(stopped), 5_000);
    expect(processHasEnded(survivor)).toBe(false);
    expect(await markedHere('session-1')).toEqual([survivor]);
  });

  it('deleting a session ends what its calls left running, and shutdown ends everything; other installations are left alone', async () => {
    const tool = isolatedTerminal();
    const start = (sessionId: string, file: string) =>
      runTool(tool, { command: `setsid sh -c 'echo $$ > ${file}; exec sleep 30' > /dev/null 2>&1 &` }, { sessionId });
    await start('session-1', 'first.pid');
    await start('session-2', 'second.pid');
    const first = await pidFrom('first.pid');
    const second = await pidFrom('second.pid', path.join(directory, 'session-2'));
    // The same session id, marked by another Hearth (another DATA_DIR).
    const neighbour = spawn('sleep', ['30'], {
      detached: true,
      stdio: 'ignore',
      env: { PATH: process.env.PATH, [processMarkerVariable]: `${hearthInstance(path.join(directory, 'other'))}:session-1:0123456789ab` },
    });
    strays.push(neighbour.pid!);
    await waitUntil(async () => (await readFile(`/proc/${neighbour.pid}/environ`, 'utf8')).includes(processMarkerVariable));

    await tool.releaseSession!('session-1');
    expect(processHasEnded(first)).toBe(true);
    expect(processHasEnded(second)).toBe(false);

    await tool.dispose!();
    expect(processHasEnded(second)).toBe(true);
    expect(processHasEnded(neighbour.pid!)).toBe(false);
    neighbour.kill('SIGKILL');
  });
});
