// Issue 14: no process a tool started survives a crash of the server, a stop, a session's
// deletion or a shutdown, and nothing of another Hearth or a recycled pid is ever killed.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  endLeftoverProcesses,
  findMarkedProcesses,
  hearthInstance,
  parseProcessMarker,
  processMarkerVariable,
  signalProcess,
} from '../src/tools/process-markers.ts';
import { runProcess } from '../src/tools/process-runner.ts';
import { toolEnvironment } from '../src/tools/tool-environment.ts';
import { startHearth, useHearth } from './support/hearth-server.ts';
import { processHasEnded, readPid } from './support/processes.ts';
import type { ScriptedLlm } from './support/scripted-llm.ts';
import { startScriptedOllama } from './support/scripted-ollama.ts';
import { prepareProfiles, startChildServer, type ChildServer } from './support/server-child.ts';
import { waitUntil } from './support/wait-until.ts';

const workerProfile = '---\nid: worker\nname: Worker\ntools: [terminal]\n---\nYou run commands.\n';

let dataDir: string;
let llm: ScriptedLlm | undefined;
let child: ChildServer | undefined;
const spawned: ChildProcess[] = [];
const strays: number[] = [];

beforeEach(async () => {
  dataDir = await mkdtemp(path.join(tmpdir(), 'hearth-orphans-'));
});
afterEach(async () => {
  await child?.kill();
  await llm?.close();
  child = undefined;
  llm = undefined;
  // Only what a failing test left behind.
  for (const process of spawned.splice(0)) process.kill('SIGKILL');
  for (const pid of strays.splice(0)) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // Ended.
    }
  }
  await rm(dataDir, { recursive: true, force: true });
});
// Registered after the hook above, so the app is closed first (hooks run last-registered first).
const startApp = useHearth();

/** `sleep 30` carrying `marker`, in a session of its own like a tool's `setsid` child; it waits until the marker is readable. */
async function sleeperMarked(marker: string): Promise<ChildProcess> {
  const sleeper = spawn('sleep', ['30'], { detached: true, stdio: 'ignore', env: { PATH: process.env.PATH, [processMarkerVariable]: marker } });
  spawned.push(sleeper);
  await waitUntil(async () => (await readFile(`/proc/${sleeper.pid}/environ`, 'utf8').catch(() => '')).includes(marker));
  return sleeper;
}

function startTime(pid: number): string {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19]!;
}

const silentLogger = () => {
  const lines: string[] = [];
  return { lines, logger: { warn: (...args: unknown[]) => void lines.push(String(args.at(-1))), debug: () => {} } };
};

describe('a server killed with SIGKILL mid-tool', () => {
  it('leaves an orphan shell (and its setsid child) that the next start ends before anything runs', async () => {
    await prepareProfiles(dataDir, { worker: workerProfile });
    llm = await startScriptedOllama();
    // Unjailed (JAIL=off), where the markers are what finds the orphans; the jailed case follows.
    child = await startChildServer(dataDir, { LLM_BACKEND: 'ollama', OLLAMA_HOST: llm.url, JAIL: 'off' });
    const sessionId = (await child.request('POST', '/sessions', { profile_id: 'worker' })).body.session_id;
    const folder = path.join(dataDir, 'session-files', sessionId);
    const command =
      "setsid sh -c 'echo $$ > escaper.pid; sleep 30; touch escaped' > /dev/null 2>&1 & " +
      'echo $$ > shell.pid; touch started; sleep 30; touch finished';
    llm.script({ toolCalls: [{ name: 'terminal', arguments: { command } }] });
    const socket = await child.connect(sessionId);
    socket.send({ type: 'message', content: 'Run the long command' });
    await waitUntil(() => existsSync(path.join(folder, 'started')), 20_000);
    const shell = (await readPid(path.join(folder, 'shell.pid')))!;
    const escaper = await waitUntil(() => readPid(path.join(folder, 'escaper.pid')));
    strays.push(shell, escaper);
    // Another Hearth's tool process, even in a session of the same id: never touched.
    const neighbour = await sleeperMarked(`${hearthInstance(path.join(dataDir, 'elsewhere'))}:${sessionId}:0123456789ab`);

    await child.kill();
    socket.close();
    // The measured bug: the server is gone, its tool's shell is not.
    expect(processHasEnded(shell)).toBe(false);
    expect(processHasEnded(escaper)).toBe(false);
    const instance = hearthInstance(dataDir);
    const leftovers = await findMarkedProcesses((marker) => parseProcessMarker(marker)?.instance === instance);
    // The shell, its sleep, the setsid shell and its sleep.
    expect(leftovers!.length).toBeGreaterThanOrEqual(4);

    const hearth = await startApp({ dataDir, llm, env: { PROFILES_DIR: path.join(dataDir, 'profiles') } });
    expect(processHasEnded(shell)).toBe(true);
    expect(processHasEnded(escaper)).toBe(true);
    expect(await findMarkedProcesses((marker) => parseProcessMarker(marker)?.instance === instance)).toEqual([]);
    expect(existsSync(path.join(folder, 'finished'))).toBe(false);
    expect(existsSync(path.join(folder, 'escaped'))).toBe(false);
    expect(processHasEnded(neighbour.pid!)).toBe(false);
    // The run itself was closed as interrupted, as before.
    const messages = (await hearth.request('GET', `/sessions/${sessionId}`)).body.messages;
    expect(messages.at(-1)).toMatchObject({ role: 'assistant', interrupted: true });
  });

  it('in a jail, leaves nothing at all: the shell and its setsid child die with the server', async () => {
    await prepareProfiles(dataDir, { worker: workerProfile });
    llm = await startScriptedOllama();
    child = await startChildServer(dataDir, { LLM_BACKEND: 'ollama', OLLAMA_HOST: llm.url });
    const health = await child.request('GET', '/health');
    if (health.body.jail?.state !== 'on') return void console.warn(`jail not on here (${JSON.stringify(health.body.jail)}): nothing to show`);
    const sessionId = (await child.request('POST', '/sessions', { profile_id: 'worker' })).body.session_id;
    const folder = path.join(dataDir, 'session-files', sessionId);
    const command = "setsid sh -c 'sleep 30; touch escaped' > /dev/null 2>&1 & touch started; sleep 30; touch finished";
    llm.script({ toolCalls: [{ name: 'terminal', arguments: { command } }] });
    const socket = await child.connect(sessionId);
    socket.send({ type: 'message', content: 'Run the long command' });
    await waitUntil(() => existsSync(path.join(folder, 'started')), 20_000);
    const instance = hearthInstance(dataDir);
    const marked = () => findMarkedProcesses((marker) => parseProcessMarker(marker)?.instance === instance);
    // Jailed: the shell, its sleep, the setsid shell and its sleep, all inside bubblewrap's PID namespace.
    expect((await marked())!.length).toBeGreaterThanOrEqual(4);

    await child.kill();
    socket.close();
    // bubblewrap dies with its parent and takes the whole PID namespace with it: no restart needed.
    await waitUntil(async () => (await marked())!.length === 0, 10_000);
    expect(existsSync(path.join(folder, 'finished'))).toBe(false);
    expect(existsSync(path.join(folder, 'escaped'))).toBe(false);
  });
});

describe('ending leftovers at start', () => {
  it('SIGKILLs every process of this installation, whatever its session, says how many, and leaves other installations alone', async () => {
    const instance = hearthInstance(dataDir);
    const ours = [await sleeperMarked(`${instance}:one:aaaaaaaaaaaa`), await sleeperMarked(`${instance}:two:bbbbbbbbbbbb`)];
    const theirs = await sleeperMarked(`${hearthInstance(`${dataDir}-other`)}:one:cccccccccccc`);
    const unmarked = spawn('sleep', ['30'], { detached: true, stdio: 'ignore', env: { PATH: process.env.PATH } });
    spawned.push(unmarked);
    const { lines, logger } = silentLogger();
    expect(await endLeftoverProcesses(dataDir, logger)).toBe(2);
    expect(lines).toEqual(['ended 2 tool processes a previous run left running']);
    for (const sleeper of ours) expect(processHasEnded(sleeper.pid!)).toBe(true);
    expect(processHasEnded(theirs.pid!)).toBe(false);
    expect(processHasEnded(unmarked.pid!)).toBe(false);
  });

  it('user-tool hosts carry the marker too, so a host a crash left behind is found and ended at the next start', async () => {
    const { writeFile } = await import('node:fs/promises');
    await mkdir(path.join(dataDir, 'user-tools'), { recursive: true });
    await writeFile(
      path.join(dataDir, 'user-tools', 'ping.ts'),
      `export const name = 'ping';\nexport const description = 'Pong.';\nexport const parameters = { type: 'object', properties: {} };\nexport async function execute() { return 'pong'; }\n`,
    );
    const hearth = await startHearth({ dataDir, profiles: { pinger: '---\nid: pinger\nname: Pinger\ntools: [ping]\n---\nPing.\n' } });
    try {
      const userTools = hearth.deps.userTools;
      await userTools.whenLoaded();
      hearth.llm.script({ toolCalls: [{ name: 'ping', arguments: {} }] }, { content: 'done' });
      await hearth.request('POST', `/sessions/${await hearth.createSession('pinger')}/messages`, { content: 'ping' });
      const hostPid = userTools.hosts().find((host) => host.pid !== undefined)?.pid;
      expect(hostPid).toBeDefined();
      const instance = hearthInstance(dataDir);
      const found = await findMarkedProcesses((marker) => parseProcessMarker(marker)?.instance === instance);
      expect(found?.map((marked) => marked.pid)).toContain(hostPid);
    } finally {
      await hearth.close();
    }
  });

  it('names one installation by its DATA_DIR however it is spelled, before and after it exists', async () => {
    const link = `${dataDir}-link`;
    await symlink(dataDir, link);
    try {
      expect(hearthInstance(link)).toBe(hearthInstance(dataDir));
      expect(hearthInstance(path.join(link, 'later'))).toBe(hearthInstance(path.join(dataDir, 'later')));
      const before = hearthInstance(path.join(dataDir, 'not-yet'));
      await mkdir(path.join(dataDir, 'not-yet'));
      expect(hearthInstance(path.join(dataDir, 'not-yet'))).toBe(before);
      expect(hearthInstance(`${dataDir}/./`)).toBe(hearthInstance(dataDir));
      expect(hearthInstance(`${dataDir}-other`)).not.toBe(hearthInstance(dataDir));
    } finally {
      await rm(link);
    }
  });

  it('without /proc finds nothing, kills nothing, says so once, and tools still run', async () => {
    const { lines, logger } = silentLogger();
    const missing = path.join(dataDir, 'no-proc');
    expect(await endLeftoverProcesses(dataDir, logger, { procRoot: missing })).toBeUndefined();
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain('cannot be read');
    expect(await findMarkedProcesses(() => true, { procRoot: missing })).toBeUndefined();
  });
});

describe('the guards before a signal', () => {
  it('never signals a pid whose start time is not the one seen with the marker (a recycled pid)', async () => {
    const sleeper = spawn('sleep', ['30'], { detached: true, stdio: 'ignore' });
    spawned.push(sleeper);
    await waitUntil(() => existsSync(`/proc/${sleeper.pid}/stat`));
    const real = startTime(sleeper.pid!);
    const recycled = { pid: sleeper.pid!, startTime: String(Number(real) - 1) };
    expect(signalProcess(recycled, 'SIGKILL')).toBe(false);
    expect(processHasEnded(sleeper.pid!)).toBe(false);
    expect(signalProcess({ pid: sleeper.pid!, startTime: real }, 'SIGKILL')).toBe(true);
    await waitUntil(() => processHasEnded(sleeper.pid!), 2_000);
    // Gone: nothing to signal, no error.
    expect(signalProcess({ pid: sleeper.pid!, startTime: real }, 'SIGKILL')).toBe(false);
  });

  it('never finds the server itself, even when it carries a marker of its own installation', async () => {
    const instance = hearthInstance(dataDir);
    const script = `process.stdout.write(String(process.pid)); setInterval(() => {}, 1000);`;
    const server = spawn(process.execPath, ['-e', script], {
      stdio: ['ignore', 'pipe', 'ignore'],
      env: { PATH: process.env.PATH, [processMarkerVariable]: `${instance}:s:dddddddddddd` },
    });
    spawned.push(server);
    await new Promise((resolve) => server.stdout!.once('data', resolve));
    // Run the scan inside that process: it must not list itself.
    const probe = spawn(
      process.execPath,
      [
        '--import',
        'tsx',
        '-e',
        `import('${path.resolve('src/tools/process-markers.ts')}').then(async (m) => process.stdout.write(JSON.stringify((await m.findMarkedProcesses(() => true)).map((p) => p.pid))))`,
      ],
      { stdio: ['ignore', 'pipe', 'inherit'], env: { PATH: process.env.PATH, [processMarkerVariable]: `${instance}:s:eeeeeeeeeeee` } },
    );
    let output = '';
    probe.stdout!.on('data', (data: Buffer) => (output += data.toString()));
    await new Promise((resolve) => probe.once('exit', resolve));
    const pids: number[] = JSON.parse(output);
    expect(pids).toContain(server.pid);
    expect(pids).not.toContain(probe.pid);
  });

  it('markers: parsed from the two outer colons; HEARTH_PROCESS never passes from the server to a tool', async () => {
    expect(parseProcessMarker('abc:session:with:colons:0123')).toEqual({ instance: 'abc', sessionId: 'session:with:colons', callId: '0123' });
    expect(parseProcessMarker('abc:0123')).toBeUndefined();
    expect(parseProcessMarker(':s:c')).toBeUndefined();
    expect(parseProcessMarker('a:s:')).toBeUndefined();
    const inherited = { PATH: '/bin', [processMarkerVariable]: 'another:hearth:call' };
    expect(toolEnvironment(processMarkerVariable, inherited)).toEqual({ PATH: '/bin' });
    const result = await runProcess({ executable: 'sh', args: ['-c', `echo "$${processMarkerVariable}"`], cwd: dataDir, env: inherited, marker: 'mine:s:c', timeoutMs: 5_000 });
    expect(result.stdout).toBe('mine:s:c\n');
  });
});
