// The jail's remaining reach (issue 31), in memory: the terminal-input filter as bytes and in a
// real jail, the command line every spawner gets (prlimit, the shell, bubblewrap's own session,
// the filter, a /tmp of the call's own), the control groups kept for reuse, and "no jail, no
// process" for the terminal and stdio MCP servers. The whole-server attacks are in test/security/.
import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parseConfig } from '../src/config.ts';
import { CallCgroups, jailLimits, ProcessCeiling, rlimitArguments } from '../src/jail/jail-limits.ts';
import { Jail, type JailProbe } from '../src/jail/jail.ts';
import { terminalInputFilter } from '../src/jail/tty-filter.ts';
import { createTerminalTool } from '../src/tools/builtin/terminal.ts';
import { McpConnection, mcpProcessMarker } from '../src/tools/mcp/mcp-connection.ts';
import { runProcess } from '../src/tools/process-runner.ts';
import { jailFor } from './support/jail.ts';
import { fixtureServer, serverConfig } from './support/mcp-servers.ts';
import { runTool } from './support/tool-context.ts';
import { unprivilegedUser } from './support/unprivileged-user.ts';
import { waitUntil } from './support/wait-until.ts';

let dataDir: string;
beforeEach(async () => {
  dataDir = await mkdtemp(path.join(tmpdir(), 'hearth-jail-reach-'));
});
afterEach(async () => {
  await rm(dataDir, { recursive: true, force: true });
});

const jailRuns = jailFor(parseConfig({})).active;
const quiet = { warn: () => undefined, info: () => undefined };

describe('the terminal-input filter', () => {
  it('is a classic-BPF program ending in allow and EPERM, comparing TIOCSTI and TIOCLINUX, for x86-64 and AArch64 only', () => {
    for (const machine of ['x64', 'arm64']) {
      const program = terminalInputFilter(machine)!;
      expect(program.length % 8).toBe(0);
      const instructions = Array.from({ length: program.length / 8 }, (_, index) => ({
        code: program.readUInt16LE(index * 8),
        whenTrue: program.readUInt8(index * 8 + 2),
        whenFalse: program.readUInt8(index * 8 + 3),
        k: program.readUInt32LE(index * 8 + 4),
      }));
      // Loads the architecture first; every jump lands inside the program.
      expect(instructions[0]).toEqual({ code: 0x20, whenTrue: 0, whenFalse: 0, k: 4 });
      instructions.forEach((instruction, index) => {
        if (instruction.code === 0x15 || instruction.code === 0x35) expect(index + 1 + Math.max(instruction.whenTrue, instruction.whenFalse)).toBeLessThan(instructions.length);
      });
      expect(instructions.at(-2)).toMatchObject({ code: 0x06, k: 0x7fff0000 });
      expect(instructions.at(-1)).toMatchObject({ code: 0x06, k: 0x00050001 });
      const compared = instructions.filter((instruction) => instruction.code === 0x15).map((instruction) => instruction.k);
      expect(compared).toEqual(expect.arrayContaining([0x5412, 0x541c]));
    }
    expect(terminalInputFilter('riscv64')).toBeUndefined();
  });

  it.skipIf(!jailRuns || spawnSync('python3', ['--version']).status !== 0)('refuses TIOCSTI with EPERM in a jail, where outside one a pipe answers ENOTTY', async () => {
    const program = 'import errno, fcntl, termios\ntry:\n    fcntl.ioctl(0, termios.TIOCSTI, b"x")\nexcept OSError as error:\n    print(errno.errorcode[error.errno])';
    const jail = jailFor(parseConfig({ DATA_DIR: dataDir }));
    const run = (withJail: boolean) =>
      runProcess({
        executable: 'python3',
        args: ['-c', program],
        stdin: '',
        cwd: '/',
        env: { PATH: process.env.PATH },
        timeoutMs: 10_000,
        ...(withJail && { jail: { jail, spec: { kind: 'strict', writable: [], cwd: '/' } } }),
      });
    expect((await run(false)).stdout.trim()).toBe('ENOTTY');
    expect((await run(true)).stdout.trim()).toBe('EPERM');
    jail.close();
  });
});

describe('the command line of a jailed call', () => {
  it('dies with Hearth (setpriv), sets the limits with prlimit, then joins its groups and opens the filter in a shell that becomes bubblewrap, in a session of its own', async () => {
    const config = parseConfig({ DATA_DIR: dataDir, JAIL_MAX_PROCESSES: '100', JAIL_MAX_MEMORY_MB: '300', JAIL_TMP_MB: '20' });
    expect(rlimitArguments(jailLimits(config), 7)).toEqual([
      'prlimit', '--nproc=100', `--data=${300 * 1024 * 1024}`, `--fsize=${20 * 1024 * 1024}`, '--nofile=1024', '--cpu=7', '--',
    ]);
    expect(rlimitArguments(jailLimits(config))).not.toContain('--cpu=7');
    if (!jailRuns) return;
    const jail = jailFor(config);
    const command = await jail.wrap('/bin/true', [], { kind: 'strict', writable: [], cwd: '/', cpuSeconds: 7 }, {});
    // Killed with Hearth from the first instruction (setpriv), then the limits.
    expect(command.executable).toBe('setpriv');
    expect(command.args.slice(0, 4)).toEqual(['--pdeathsig', 'KILL', '--', 'prlimit']);
    const shell = command.args.indexOf('/bin/sh');
    // Root's ceiling is the plain number; another user's adds what that user runs already (ProcessCeiling).
    const [processes, ...others] = command.args.slice(4, shell);
    expect(Number(processes!.replace('--nproc=', ''))).toBeGreaterThanOrEqual(100);
    expect(others).toEqual(rlimitArguments(jailLimits(config), 7).slice(2));
    const bubblewrap = command.args.slice(command.args.indexOf('bwrap'));
    expect(bubblewrap).toContain('--new-session');
    expect(bubblewrap.join(' ')).toContain('--seccomp 9');
    // /tmp is a folder of the call's own (bubblewrap 0.8 has no sized tmpfs), removed with the call.
    const temporary = bubblewrap[bubblewrap.indexOf('/tmp') - 1]!;
    expect(path.dirname(temporary)).toBe(path.join(dataDir, 'jail', 'tmp'));
    expect(existsSync(temporary)).toBe(true);
    command.release();
    expect(existsSync(temporary)).toBe(false);
    jail.close();
  });
});

describe('the process ceiling of an unprivileged Hearth', () => {
  it('is what the user runs already plus the call\'s processes; root gets the plain number', async () => {
    expect(await new ProcessCeiling(0).for(256)).toBe(256);
    const user = await unprivilegedUser();
    const sleeper = spawn('sleep', ['30'], { stdio: 'ignore', uid: user.uid, gid: user.gid });
    try {
      await waitUntil(() => readFileSync(`/proc/${sleeper.pid}/status`, 'utf8').includes(`Uid:\t${user.uid}`));
      expect(await new ProcessCeiling(user.uid).for(256)).toBeGreaterThan(256);
    } finally {
      sleeper.kill('SIGKILL');
    }
  });
});

describe.skipIf(CallCgroups.find() === undefined)('control groups per call (where Hearth may make them: root here)', () => {
  it('writes the limits, signals the whole group, and gives an ended call\'s group to the next call', async () => {
    const groups = CallCgroups.find()!;
    const limits = jailLimits(parseConfig({ JAIL_MAX_PROCESSES: '40' }));
    const first = groups.create(limits);
    const pidsFile = first.joinFiles.find((file) => file.includes('/pids/') || groups.version === 2)!;
    expect(readFileSync(path.join(path.dirname(pidsFile), 'pids.max'), 'utf8').trim()).toBe('40');
    const sleeper = spawn('sh', ['-c', `echo $$ > ${pidsFile} && exec sleep 30`], { stdio: 'ignore' });
    const ended = once(sleeper, 'exit');
    await waitUntil(() => readFileSync(pidsFile, 'utf8').includes(String(sleeper.pid)), 5_000);
    first.signal('SIGKILL');
    expect((await ended)[1]).toBe('SIGKILL');
    await waitUntil(() => readFileSync(pidsFile, 'utf8').trim() === '', 5_000);
    first.release();
    const second = groups.create(limits);
    expect(second.joinFiles).toEqual(first.joinFiles);
    second.release();
    groups.close();
    expect(existsSync(path.dirname(pidsFile))).toBe(false);
  });
});

describe('no jail, no process', () => {
  const unavailable: JailProbe = {
    status: { state: 'unavailable', reason: 'bubblewrap (bwrap) is not installed', off: ['terminal', 'code_exec', 'user tools', 'stdio MCP servers'], fix: 'sudo apt install bubblewrap passt' },
    canDisableUserNamespaces: false,
    pastaInstalled: false,
  };

  it('the terminal refuses with the reason, the fix and JAIL=off, and wrap refuses anything', async () => {
    const config = parseConfig({ DATA_DIR: dataDir, SESSION_FILES_DIR: path.join(dataDir, 'sessions') });
    const jail = new Jail({ config, logger: quiet }, unavailable);
    const result = await runTool(createTerminalTool({ config, jail }), { command: 'echo ran' });
    expect(result).toMatchObject({ success: false });
    expect(result.output).toBe(
      'The terminal is off: it runs only inside a jail, and bubblewrap (bwrap) is not installed. Fix: sudo apt install bubblewrap passt. Or set JAIL=off to run it unjailed on purpose (docs/operations.md, "The jail: bubblewrap and passt").',
    );
    await expect(jail.wrap('/bin/echo', ['ran'], { kind: 'strict', writable: [], cwd: '/' }, {})).rejects.toThrow(/is off: it runs only inside a jail/);
  });

  it('a stdio MCP server that asks for a jail is not started: failed with the reason, never tried again', async () => {
    const log = path.join(dataDir, 'fixture.log');
    const config = serverConfig('fixture', { ...fixtureServer({ log }), jail: { paths: {}, network: false } }, dataDir);
    const jail = new Jail({ config: parseConfig({ DATA_DIR: dataDir }), logger: quiet }, unavailable);
    const connection = new McpConnection({ config, processMarker: mcpProcessMarker(dataDir, 'fixture'), jail, backoff: { firstMs: 1, longestMs: 1 } });
    const changes: string[] = [];
    connection.on('changed', () => changes.push(connection.state));
    connection.start();
    await waitUntil(() => connection.state === 'failed');
    expect(connection.message).toMatch(/^The stdio MCP server fixture is off: it runs only inside a jail, .* Fix: sudo apt install bubblewrap passt\. Or set JAIL=off/);
    // A retry would show as another change within a few backoffs; the log would show a start.
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(changes).toEqual(['failed']);
    expect(existsSync(log)).toBe(false);
    await connection.close();
  });
});
