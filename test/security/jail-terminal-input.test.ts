// Issue 31, attack 4: with Hearth started in a terminal (a pseudo-terminal from `script`, as a
// person starts it in theirs), a jailed MCP server with no grant and a user tool with the
// childProcess grant run a program that types `echo <marker>` into that terminal with TIOCSTI
// (on /dev/tty and on each descriptor they inherited) and tries TIOCLINUX. Every jail is a
// session of its own (no controlling terminal: /dev/tty does not open) and carries a seccomp
// filter refusing both ioctls; the user-tool host holds no descriptor of the terminal. The
// terminal's output side shows what was typed (the line discipline echoes input): the marker
// never appears there. Run as Hearth's user (root in CI), as an unprivileged user, and with
// JAIL=off (no filter then, but still no terminal to reach).
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EventSocket } from '../support/event-socket.ts';
import { fixtureServer } from '../support/mcp-servers.ts';
import { unprivilegedUser } from '../support/unprivileged-user.ts';
import { waitUntil } from '../support/wait-until.ts';
import { attackerProfile, callTools, startJailedHearth, waitForUserTools, type JailedHearth } from './jail-harness.ts';
import { python, terminalInputProgram, terminalInputUserTool } from './terminal-input-attack.ts';

const sentinelTool = { properties: { text: { type: 'string' } }, execute: 'console.log(params.text); return "said";' };

it('the test sees typed input: the attack run in the terminal itself shows its marker on the output side', () => {
  const marker = `typed-${randomBytes(4).toString('hex')}`;
  const shown = spawnSync('script', ['--quiet', '--flush', '--command', `${python} -c "$PROGRAM" ${marker} 3>/dev/null`, '/dev/null'], {
    env: { PATH: process.env.PATH, PROGRAM: terminalInputProgram },
    stdio: ['ignore', 'pipe', 'pipe'],
    encoding: 'utf8',
    timeout: 20_000,
  });
  expect(shown.stdout).toContain(`echo ${marker}`);
});

const runs = [
  { name: "as Hearth's user", jailOff: false, unprivileged: false },
  { name: 'as an unprivileged user', jailOff: false, unprivileged: true },
  { name: 'with JAIL=off', jailOff: true, unprivileged: false },
];

describe.each(runs)('Hearth in a terminal, $name', ({ jailOff, unprivileged }) => {
  let hearth: JailedHearth;
  let socket: EventSocket;

  beforeAll(async () => {
    hearth = await startJailedHearth({
      terminal: true,
      ...(unprivileged && { user: await unprivilegedUser() }),
      ...(jailOff && { environment: { JAIL: 'off' } }),
      mcpConfig: { mcpServers: { typist: { ...fixtureServer(), jail: { paths: {}, network: false } } } },
      userTools: { typist_tool: terminalInputUserTool, say: sentinelTool },
      toolFiles: { 'permissions.json': JSON.stringify({ typist_tool: { permissions: ['childProcess'] } }) },
      profiles: { attacker: attackerProfile(['typist__run_attached', 'typist_tool', 'say']) },
    });
    await waitForUserTools(hearth, ['typist_tool', 'say']);
    await waitUntil(async () => {
      const servers = (await hearth.request('GET', '/agents/tools')).body.servers as { status: string; message?: string }[];
      if (servers[0]?.status === 'failed') throw new Error(`typist failed: ${servers[0].message}`);
      return servers[0]?.status === 'connected';
    }, 60_000);
    socket = await hearth.connect(await hearth.createSession('attacker'));
  }, 120_000);

  afterAll(async () => {
    socket?.close();
    await hearth?.close();
  });

  it('nothing the MCP server or the user tool types reaches the terminal', async () => {
    const marker = `typed-${randomBytes(4).toString('hex')}`;
    const sentinel = `attacks-over-${randomBytes(4).toString('hex')}`;
    const [server, tool, said] = await callTools(hearth, socket, [
      { name: 'typist__run_attached', arguments: { command: python, args: ['-c', terminalInputProgram, marker] } },
      { name: 'typist_tool', arguments: { marker } },
      { name: 'say', arguments: { text: sentinel } },
    ]);
    expect(said!.success, said!.result).toBe(true);
    // The user tool's console.log reaches the terminal after both attacks: had anything been typed, it would show before.
    await waitUntil(() => hearth.output().includes(sentinel), 20_000);
    expect(hearth.output()).not.toContain(marker);
    for (const call of [server!, tool!]) {
      expect(call.success, call.result).toBe(true);
      const found = JSON.parse(call.result.replace(/^[^{]*/, '').replace(/[^}]*$/, '')) as Record<string, string>;
      expect(Object.values(found)).not.toContain('pushed');
      expect(found['TIOCLINUX']).not.toBe('allowed');
      // A session of its own: no controlling terminal to open.
      expect(found['/dev/tty']).toBe('open ENXIO');
      // The seccomp filter answers EPERM whatever the descriptor (without it: ENOTTY, as none of them is a terminal).
      if (!jailOff) expect(found).toMatchObject({ 0: 'EPERM', 1: 'EPERM', 2: 'EPERM', TIOCLINUX: 'EPERM' });
    }
  }, 90_000);

  it.skipIf(jailOff)('/health says the terminal-input filter is on', async () => {
    expect((await hearth.request('GET', '/health')).body.jail).toMatchObject({ state: 'on', terminalFilter: 'on' });
  });
});
