// User-tool host recovery (issue 14): a module that failed or hung at import is not loaded again
// until its file changes, start-up does not wait for the user tools, and a crashing tool costs the
// others no more than their own host's load. Real tool files, real host processes; the first test
// runs the real app on port 0 with the scripted model. A looping module counts its imports by
// calling a small HTTP server here first (the loading host may write nowhere, but it may connect).
// Waits are on events (tools_changed, 'changed', a turn's events), never on sleeps.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { afterEach, describe, expect, it } from 'vitest';
import type { EventOf, ToolSummary } from '../src/protocol/events.ts';
import { createLogger } from '../src/logger.ts';
import { openDatabase } from '../src/store/database.ts';
import { ToolRegistry } from '../src/tools/tool-registry.ts';
import { toToolResult } from '../src/tools/tool.ts';
import { UserToolManager, type ReloadReport } from '../src/tools/user-tools/user-tool-manager.ts';
import { toolModule, type ToolFile } from './security/user-tools-harness.ts';
import type { EventSocket } from './support/event-socket.ts';
import { toolerProfile } from './support/test-tools.ts';
import { startHearth, type Hearth } from './support/hearth-server.ts';
import { toolContext } from './support/tool-context.ts';

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function tempDir(): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), 'hearth-recovery-'));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

/** Counts GET /<name> requests: a module that calls it at its top level tells each time it is imported. */
async function startImportCounter(): Promise<{ url: (name: string) => string; count: (name: string) => number }> {
  const counts = new Map<string, number>();
  const server: Server = createServer((request, response) => {
    const name = (request.url ?? '/').slice(1);
    counts.set(name, (counts.get(name) ?? 0) + 1);
    response.end('counted');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanups.push(() => new Promise((resolve) => server.close(resolve)));
  const { port } = server.address() as AddressInfo;
  return { url: (name) => `http://127.0.0.1:${port}/${name}`, count: (name) => counts.get(name) ?? 0 };
}

/**
 * Top-level code that reports the import to the counter, then never finishes (when `when` holds):
 * its thread is held for good, as by an endless loop, but asleep rather than spending a core for
 * the whole load timeout (test/user-tool-host.test.ts loads a spinning one).
 */
const loopAtImport = (counterUrl: string, when = 'true') => `if (${when}) {
  await fetch(${JSON.stringify(counterUrl)});
  for (;;) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0);
}`;

const ping: ToolFile = { execute: '  return `pong from ${process.pid}`;' };
/** Ends its host the way a crashing tool does. */
const crasher: ToolFile = { execute: '  process.exit(1);' };

async function writeTools(toolsDir: string, tools: Record<string, ToolFile>): Promise<void> {
  await mkdir(toolsDir, { recursive: true });
  for (const [name, tool] of Object.entries(tools)) await writeFile(path.join(toolsDir, `${name}.ts`), toolModule(name, tool));
}


/** When each event of the socket arrived (performance.now()), by its index in `socket.events`. */
function arrivalTimes(socket: EventSocket): number[] {
  const times: number[] = [];
  // Registered after the EventSocket's own listener, so the event is already recorded.
  socket.socket.on('message', () => (times[socket.events.length - 1] = performance.now()));
  return times;
}

/** How long each call took, from its tool_started to its tool_call, in the order they finished. */
function callDurations(socket: EventSocket, times: number[]): { tool: string; ms: number; result: EventOf<'tool_call'> }[] {
  const startedAt = new Map<string, number>();
  return socket.events.flatMap((event, index) => {
    if (event.type === 'tool_started') startedAt.set(event.call_id, times[index]!);
    if (event.type !== 'tool_call') return [];
    return [{ tool: event.tool, ms: times[index]! - startedAt.get(event.call_id)!, result: event }];
  });
}

const hasTool = (name: string) => (tools: ToolSummary[]) => tools.some((tool) => tool.name === name);

describe('user-tool host recovery', () => {
  it(
    'starts without waiting for a file that loops at import, brings the healthy tools with tools_changed, and never imports the looping file again until it changes',
    async () => {
      const counter = await startImportCounter();
      const dataDir = await tempDir();
      const toolsDir = path.join(dataDir, 'user-tools');
      await writeTools(toolsDir, { loops_at_import: { prelude: loopAtImport(counter.url('loops')), ...ping }, ping, crasher });

      const startedAt = performance.now();
      // Unjailed: the module counts its imports by calling a counter on this machine's loopback, which no jail reaches.
      // The load timeout is shortened (its 10 s default is checked in test/internals/user-tool-host.test.ts).
      const hearth: Hearth = await startHearth({
        dataDir,
        env: { JAIL: 'off' },
        profiles: { tooler: toolerProfile(['scratchpad', 'ping', 'crasher', 'loops_at_import']) },
        userToolLoadTimeoutMs: 3_000,
      });
      const startUpMs = performance.now() - startedAt;
      cleanups.push(() => hearth.close());
      const manager = hearth.deps.userTools;
      expect(manager.loadTimeoutMs).toBe(3_000);
      // It returned long before the looping module's load timeout, with the user tools still loading.
      expect(startUpMs).toBeLessThan(manager.loadTimeoutMs);
      expect(hearth.deps.tools.get('ping')).toBeUndefined();
      console.info(`start-up with a module that loops at import: ${startUpMs.toFixed(0)} ms (load timeout ${manager.loadTimeoutMs} ms)`);

      // A message sent meanwhile waits for the first load, no longer than the load timeout (the
      // looping module holds it that long), then runs with the tools that loaded (issue 26).
      const socket = await hearth.connect(await hearth.createSession('tooler'));
      const times = arrivalTimes(socket);
      hearth.llm.script({ toolCalls: [{ name: 'ping', arguments: {} }] }, { content: 'Pinged.' });
      socket.send({ type: 'message', content: 'Ping' });
      expect((await socket.next('stream_end', manager.loadTimeoutMs + 10_000)).content).toBe('Pinged.');
      expect(socket.ofType('tool_call').at(-1)).toMatchObject({ tool: 'ping', success: true });

      // The healthy tools arrived with tools_changed once the looping module had timed out.
      const arrived = socket.ofType('tools_changed').find((event) => hasTool('ping')(event.tools));
      if (!arrived) throw new Error('no tools_changed with ping arrived');
      expect(arrived.tools.map((tool) => tool.name)).toEqual(expect.arrayContaining(['ping', 'crasher', 'scratchpad']));
      expect(hasTool('loops_at_import')(arrived.tools)).toBe(false);
      const verdict = { file: 'loops_at_import.ts', message: expect.stringMatching(/^Failed while loading: loading did not finish within 3 s/) };
      expect((await hearth.request('GET', '/agents/tools')).body.errors).toEqual([verdict]);
      expect(counter.count('loops')).toBe(1);

      // Crash the session's host three times: each next call of a healthy tool answers from a fresh host at once.
      const rounds = Array.from({ length: 3 }, () => [{ toolCalls: [{ name: 'crasher', arguments: {} }] }, { toolCalls: [{ name: 'ping', arguments: {} }] }]);
      hearth.llm.script(...rounds.flat(), { content: 'Crashed and pinged.' });
      socket.send({ type: 'message', content: 'Crash, then ping, three times' });
      expect((await socket.next('stream_end', 30_000)).content).toBe('Crashed and pinged.');
      const calls = callDurations(socket, times).slice(-6);
      expect(calls.map(({ tool, result }) => [tool, result.success])).toEqual([
        ['crasher', false],
        ['ping', true],
        ['crasher', false],
        ['ping', true],
        ['crasher', false],
        ['ping', true],
      ]);
      for (const { tool, result } of calls) if (tool === 'crasher') expect(result.result).toMatch(/did not finish: the tool host exited \(code 1\)/);
      const pids = calls.filter(({ tool }) => tool === 'ping').map(({ result }) => result.result);
      expect(new Set(pids).size).toBe(3); // three hosts, one after each crash
      const pingMs = calls.filter(({ tool }) => tool === 'ping').map(({ ms }) => ms);
      console.info(`ping after a host crash: ${pingMs.map((ms) => ms.toFixed(0)).join(', ')} ms`);
      for (const ms of pingMs) expect(ms).toBeLessThan(manager.loadTimeoutMs);
      expect(counter.count('loops')).toBe(1);

      // A forced reload (what reload_tools does) keeps the verdict: same error, no import, no load timeout.
      const reloadStarted = performance.now();
      const report = await manager.reload({ force: true });
      expect(performance.now() - reloadStarted).toBeLessThan(manager.loadTimeoutMs);
      expect(report.errors).toEqual([verdict]);
      expect(report.loaded.sort()).toEqual(['crasher', 'ping']);
      expect((await hearth.request('GET', '/agents/tools')).body.errors).toEqual([verdict]);
      expect(counter.count('loops')).toBe(1);

      // A good version of the file is loaded: the watcher reloads it and announces it.
      await writeFile(path.join(toolsDir, 'loops_at_import.ts'), toolModule('loops_at_import', { execute: "  return 'fixed';" }));
      await socket.nextMatching((event) => event.type === 'tools_changed' && hasTool('loops_at_import')(event.tools), 'tools_changed with loops_at_import');
      expect(manager.errors()).toEqual([]);
      hearth.llm.script({ toolCalls: [{ name: 'loops_at_import', arguments: {} }] }, { content: 'Fixed.' });
      socket.send({ type: 'message', content: 'Call the fixed tool' });
      expect(await socket.next('tool_call')).toMatchObject({ tool: 'loops_at_import', success: true, result: 'fixed' });
      await socket.next('stream_end');
      expect(counter.count('loops')).toBe(1);
    },
    60_000,
  );

  it('leaves a module that crashes or hangs only in a session host out of every later host, so a crash loop costs other calls no more than their own load', async () => {
    const counter = await startImportCounter();
    const dataDir = await tempDir();
    const toolsDir = path.join(dataDir, 'user-tools');
    const sessionFilesDir = path.join(dataDir, 'session-files');
    // The loading host runs in the temp folder; a session's host runs in the session's folder.
    const inSessionHost = `process.cwd().startsWith(${JSON.stringify(sessionFilesDir)})`;
    await writeTools(toolsDir, {
      ping,
      crasher,
      exits_in_session: { prelude: `if (${inSessionHost}) process.exit(1);`, ...ping },
      loops_in_session: { prelude: loopAtImport(counter.url('session-loops'), inSessionHost), ...ping },
    });
    const db = await openDatabase(path.join(dataDir, 'hearth.db'));
    const registry = new ToolRegistry();
    const loadTimeoutMs = 3_000;
    const manager = new UserToolManager({ toolsDir, db, source: registry.addSource('user', 'user'), timeoutMs: 10_000, logger: createLogger('silent'), sessionFilesDir, loadTimeoutMs });
    cleanups.push(async () => {
      await manager.close();
      await db.destroy();
    });
    const call = async (name: string, sessionId: string) => {
      const started = performance.now();
      const result = toToolResult(await registry.get(name)!.tool.execute({}, toolContext({ sessionId })));
      return { ...result, ms: performance.now() - started };
    };

    expect(await manager.reload()).toEqual({ loaded: ['crasher', 'exits_in_session', 'loops_in_session', 'ping'], errors: [] });
    expect(counter.count('session-loops')).toBe(0);

    // The first session host finds both out (once: a crash, then the load timeout); the tools are then published without them.
    const republished = new Promise<ReloadReport>((resolve) => manager.once('changed', resolve));
    const first = await call('ping', 'first');
    expect(first).toMatchObject({ success: true, output: expect.stringMatching(/^pong /) });
    expect(counter.count('session-loops')).toBe(1);
    const report = await republished;
    expect(report.loaded).toEqual(['crasher', 'ping']);
    expect(report.errors).toEqual([
      { file: 'exits_in_session.ts', message: expect.stringMatching(/^Failed while loading: the tool host exited \(code 1\)/) },
      { file: 'loops_in_session.ts', message: `Failed while loading: loading did not finish within ${loadTimeoutMs / 1000} s (an endless loop at the top level?).` },
    ]);
    expect(manager.errors()).toEqual(report.errors);
    expect(registry.get('loops_in_session')).toBeUndefined();

    // A tool that crashes its host on every call: the healthy tool's next call waits only for a new host.
    for (let round = 0; round < 3; round++) {
      expect(await call('crasher', 'first')).toMatchObject({ success: false, output: expect.stringMatching(/the tool host exited \(code 1\)/) });
      const after = await call('ping', 'first');
      expect(after.success).toBe(true);
      expect(after.ms).toBeLessThan(loadTimeoutMs);
    }
    // Another session's first host loads only the modules that loaded.
    const other = await call('ping', 'second');
    expect(other.success).toBe(true);
    expect(other.ms).toBeLessThan(loadTimeoutMs);
    expect(counter.count('session-loops')).toBe(1);
  }, 40_000);
});
