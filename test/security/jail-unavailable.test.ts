// Issues 23 and 31 (attack 9): where bubblewrap cannot run, nothing runs unjailed by accident.
// Hearth still starts; /health, the start-up log and the page say what is off (the terminal,
// code_exec, user tools, stdio MCP servers) and the one command that fixes it; each of them
// refuses naming JAIL=off, and server_admin's terminal asked to `cat <install>/.env` (a read the
// rules allow without a question) returns no secret. Two machines: one without the package (a
// PATH with no bwrap) and one whose kernel refuses user namespaces (a `bwrap` first on PATH that
// fails as bubblewrap then does). With JAIL=off set on purpose they all run.
import { existsSync } from 'node:fs';
import { chmod, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixtureServer } from '../support/mcp-servers.ts';
import { unprivilegedUser, type UnprivilegedUser } from '../support/unprivileged-user.ts';
import { waitUntil } from '../support/wait-until.ts';
import { attackerProfile, callTools, secretValues, startJailedHearth, waitForUserTools, type JailedHearth } from './jail-harness.ts';

let folders: string[] = [];
let pathWithoutBubblewrap: string;
let pathRefusingNamespaces: string;

/** What Hearth and the test's shell run besides node (given by absolute path): everything but bwrap. */
const programs = ['env', 'sh', 'setsid', 'python3', 'cat', 'echo', 'find', 'prlimit'];

beforeAll(async () => {
  const missing = await mkdtemp(path.join(tmpdir(), 'hearth-no-bwrap-'));
  for (const program of programs) {
    const found = spawnSync('sh', ['-c', `command -v ${program}`], { encoding: 'utf8' }).stdout.trim();
    if (found) await symlink(found, path.join(missing, program));
  }
  // Searchable by the unprivileged user too.
  await chmod(missing, 0o755);
  pathWithoutBubblewrap = missing;
  const refusing = await mkdtemp(path.join(tmpdir(), 'hearth-bwrap-no-userns-'));
  const fake = path.join(refusing, 'bwrap');
  await writeFile(fake, '#!/bin/sh\necho "bwrap: No permissions to create new namespace, likely because the kernel does not allow non-privileged user namespaces." >&2\nexit 1\n');
  await chmod(fake, 0o755);
  pathRefusingNamespaces = `${refusing}:${process.env.PATH}`;
  folders = [missing, refusing];
});
afterAll(async () => {
  for (const folder of folders) await rm(folder, { recursive: true, force: true });
});

const off = ['terminal', 'code_exec', 'user tools', 'stdio MCP servers'];
const userTools = { echo_tool: { execute: 'return { echoed: "user tool ran" };' } };

interface HearthOptions {
  path: string;
  environment?: Record<string, string>;
  fixtureLog: string;
  user?: UnprivilegedUser;
}

async function withHearth(options: HearthOptions, check: (hearth: JailedHearth) => Promise<void>): Promise<void> {
  const hearth = await startJailedHearth({
    path: options.path,
    ...(options.user && { user: options.user }),
    environment: options.environment ?? {},
    userTools,
    mcpConfig: { mcpServers: { fixture: { ...fixtureServer({ log: options.fixtureLog }), jail: { paths: {}, network: false } } } },
    profiles: { attacker: attackerProfile(['code_exec', 'echo_tool', 'terminal', 'fixture__echo']) },
  });
  try {
    await check(hearth);
  } finally {
    await hearth.close();
  }
}

async function fixtureServerStatus(hearth: JailedHearth): Promise<{ status: string; message?: string }> {
  return await waitUntil(async () => {
    const servers = (await hearth.request('GET', '/agents/tools')).body.servers as { name: string; status: string; message?: string }[];
    const server = servers.find((entry) => entry.name === 'fixture');
    return server && server.status !== 'connecting' ? server : undefined;
  }, 30_000);
}

const machines = [
  { name: 'without the bubblewrap package', path: () => pathWithoutBubblewrap, reason: /bubblewrap \(bwrap\) is not installed/, fix: 'sudo apt install bubblewrap passt', unprivileged: false },
  { name: 'without the bubblewrap package, Hearth run by an unprivileged user', path: () => pathWithoutBubblewrap, reason: /bubblewrap \(bwrap\) is not installed/, fix: 'sudo apt install bubblewrap passt', unprivileged: true },
  { name: 'whose kernel refuses user namespaces', path: () => pathRefusingNamespaces, reason: /cannot create user namespaces/, fix: expect.stringMatching(/^sudo sysctl -w /), unprivileged: false },
];

describe.each(machines)('on a machine $name', ({ path: pathOf, reason, fix, unprivileged }) => {
  it('Hearth starts and says what is off and the fix; the terminal, code_exec, user tools and stdio MCP servers refuse; `cat .env` gives no secret', async () => {
    const fixtureLog = path.join(tmpdir(), `hearth-fixture-${process.pid}-${Date.now()}.log`);
    const user = unprivileged ? await unprivilegedUser() : undefined;
    await withHearth({ path: pathOf(), fixtureLog, ...(user && { user }) }, async (hearth) => {
      const health = await hearth.request('GET', '/health');
      expect(health.status).toBe(200);
      expect(health.body.jail).toEqual({ state: 'unavailable', reason: expect.stringMatching(reason), off, fix });
      await waitUntil(() => /jail unavailable: .*Off until it works or JAIL=off is set: terminal, code_exec, user tools, stdio MCP servers\. Fix: sudo /.test(hearth.output()), 30_000);

      // The user tool is not loaded; GET /agents/tools (and so the page) says which file and why.
      await waitUntil(() => /user tool not loaded: User tools is off: .*JAIL=off/.test(hearth.output()), 30_000);
      const listed = (await hearth.request('GET', '/agents/tools')).body;
      const refusedTool = listed.errors.filter((error: { file: string }) => error.file === 'echo_tool.ts');
      expect(refusedTool).toHaveLength(1);
      expect(refusedTool[0].message).toMatch(/^User tools is off: .*Fix: sudo .*JAIL=off/);

      // The MCP server is not started at all: failed, with the reason, and it never wrote its log.
      const server = await fixtureServerStatus(hearth);
      expect(server.status).toBe('failed');
      expect(server.message).toMatch(/^The stdio MCP server fixture is off: it runs only inside a jail, .*Fix: sudo .*JAIL=off/);
      expect(existsSync(fixtureLog)).toBe(false);

      const socket = await hearth.connect(await hearth.createSession('attacker'));
      const [code, tool, terminal] = await callTools(hearth, socket, [
        { name: 'code_exec', arguments: { language: 'javascript', code: 'console.log("code ran")' } },
        { name: 'echo_tool', arguments: {} },
        { name: 'terminal', arguments: { command: 'echo terminal ran' } },
      ]);
      socket.close();
      expect(code!.success).toBe(false);
      expect(code!.result).toMatch(/JAIL=off/);
      expect(code!.result).not.toContain('code ran');
      expect(tool!.success).toBe(false);
      expect(tool!.result).not.toContain('user tool ran');
      expect(terminal!.success).toBe(false);
      expect(terminal!.result).toMatch(/^The terminal is off: it runs only inside a jail, .*Fix: sudo .*JAIL=off/);
      expect(terminal!.result).not.toContain('terminal ran');

      // Attack 9: server_admin's read-only class lets `cat` run unasked; without a jail it must not run at all.
      const admin = await hearth.connect(await hearth.createSession('server_admin'));
      const [read] = await callTools(hearth, admin, [{ name: 'terminal', arguments: { command: `cat ${path.join(hearth.projectDir, '.env')}` } }]);
      admin.close();
      expect(read!.success).toBe(false);
      expect(read!.result).toMatch(/^The terminal is off/);
      for (const secret of secretValues(hearth.secrets)) expect(read!.result).not.toContain(secret);
    });
  }, 120_000);
});

describe('with JAIL=off set on purpose', () => {
  it('the terminal, code_exec, user tools and stdio MCP servers run unjailed, and /health says so', async () => {
    const fixtureLog = path.join(tmpdir(), `hearth-fixture-${process.pid}-${Date.now()}.log`);
    await withHearth({ path: pathWithoutBubblewrap, environment: { JAIL: 'off' }, fixtureLog }, async (hearth) => {
      await waitForUserTools(hearth, ['echo_tool']);
      expect((await hearth.request('GET', '/health')).body.jail).toMatchObject({ state: 'off' });
      expect(await fixtureServerStatus(hearth)).toMatchObject({ status: 'connected' });
      const socket = await hearth.connect(await hearth.createSession('attacker'));
      const [code, tool, terminal, echoed] = await callTools(hearth, socket, [
        { name: 'code_exec', arguments: { language: 'javascript', code: 'console.log("code ran")' } },
        { name: 'echo_tool', arguments: {} },
        { name: 'terminal', arguments: { command: 'echo terminal ran' } },
        { name: 'fixture__echo', arguments: { text: 'server ran' } },
      ]);
      socket.close();
      expect(code!.result).toContain('code ran');
      expect(tool!.success, tool!.result).toBe(true);
      expect(tool!.result).toContain('user tool ran');
      expect(terminal!.result).toContain('terminal ran');
      expect(echoed!.result).toContain('server ran');
      await rm(fixtureLog, { force: true });
    });
  }, 120_000);
});
