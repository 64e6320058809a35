// Issue 34: no process outlives its owner. Hearth is SIGKILLed (nothing of it runs after: no
// shutdown, no exit handler) while every kind of process it starts for the agent runs: a user-tool
// host, a stdio MCP server with network (so pasta and the namespace holder run too), a `terminal`
// call and a `code_exec` call. Everything that was under Hearth must end, as root and as an
// unprivileged user. Before the fix pasta, daemonized with its parent 1, outlived every Hearth
// that had a jail with network, holding the namespace alive.
import { readFile, readdir } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EventSocket } from '../support/event-socket.ts';
import { fixtureServer } from '../support/mcp-servers.ts';
import { unprivilegedUser } from '../support/unprivileged-user.ts';
import { waitUntil } from '../support/wait-until.ts';
import { attackerProfile, startJailedHearth, waitForUserTools, type JailedHearth } from './jail-harness.ts';

interface RunningProcess {
  pid: number;
  startTime: string;
  /** The command line, and for the user-tool host, which names itself, its process marker. */
  command: string;
}

async function identity(pid: number): Promise<{ startTime: string; state: string } | undefined> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => undefined);
  if (stat === undefined) return undefined;
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return { state: fields[0]!, startTime: fields[19]! };
}

/** Every process under `pid` (the children of each of its threads, and theirs), with its command line. */
async function processesUnder(pid: number): Promise<RunningProcess[]> {
  const found: RunningProcess[] = [];
  const pending = [pid];
  while (pending.length > 0) {
    const parent = pending.pop()!;
    for (const thread of await readdir(`/proc/${parent}/task`).catch(() => [] as string[])) {
      const children = await readFile(`/proc/${parent}/task/${thread}/children`, 'utf8').catch(() => '');
      for (const child of children.trim().split(' ').filter(Boolean).map(Number)) {
        const known = await identity(child);
        const environment = await readFile(`/proc/${child}/environ`, 'utf8').catch(() => '');
        const marker = /HEARTH_PROCESS=[^:]*:user-tools:host/.test(environment) ? ' [user-tools:host]' : '';
        const command = (await readFile(`/proc/${child}/cmdline`, 'utf8').catch(() => '')).replaceAll('\0', ' ').trim() + marker;
        if (known === undefined || known.state === 'Z') continue;
        found.push({ pid: child, startTime: known.startTime, command });
        pending.push(child);
      }
    }
  }
  return found;
}

/**
 * The pasta processes serving a namespace held by one of `found`: under Hearth now, but a
 * daemonized pasta (parent 1) is found all the same, by the namespace it names.
 */
async function pastaServing(found: RunningProcess[]): Promise<RunningProcess[]> {
  const namespaces = found.map((process) => `/proc/${process.pid}/ns/net`);
  const serving: RunningProcess[] = [];
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry) || found.some((process) => process.pid === Number(entry))) continue;
    const command = (await readFile(`/proc/${entry}/cmdline`, 'utf8').catch(() => '')).replaceAll('\0', ' ').trim();
    const known = await identity(Number(entry));
    if (command.startsWith('pasta ') && known !== undefined && namespaces.some((namespace) => command.includes(namespace))) {
      serving.push({ pid: Number(entry), startTime: known.startTime, command });
    }
  }
  return serving;
}

/** Still running: the pid names the same process (same start time) and it is not a zombie waiting for init to reap it. */
async function stillRuns(process: RunningProcess): Promise<boolean> {
  const now = await identity(process.pid);
  return now !== undefined && now.startTime === process.startTime && now.state !== 'Z';
}

/** What each kind of jailed process looks like on its command line. */
const kinds: Record<string, (command: string) => boolean> = {
  'user-tool host': (command) => command.endsWith('[user-tools:host]') && !command.startsWith('bwrap ') && !command.startsWith('setpriv '),
  'MCP server': (command) => command.includes('mcp-fixture-server') && !command.includes('bwrap'),
  'terminal call': (command) => command === 'sleep 601' || command === '/usr/bin/sleep 601' || command === '/bin/sleep 601',
  'code_exec call': (command) => /^\S*python3? /.test(command),
  pasta: (command) => command.startsWith('pasta '),
  'network namespace holder': (command) => command.startsWith('bwrap ') && command.includes('CAP_NET_ADMIN'),
};

const runs = [{ name: 'as root', unprivileged: false }, { name: 'as an unprivileged user', unprivileged: true }];

describe.each(runs)('Hearth SIGKILLed with every kind of jailed process running, $name', ({ unprivileged }) => {
  let hearth: JailedHearth;
  const sockets: EventSocket[] = [];

  beforeAll(async () => {
    const fixture = fixtureServer();
    hearth = await startJailedHearth({
      ...(unprivileged && { user: await unprivilegedUser() }),
      userTools: { waiting_tool: { execute: 'return await new Promise(() => undefined);' } },
      mcpConfig: { mcpServers: { prober: { ...fixture, jail: { paths: {}, network: true } } } },
      profiles: { attacker: attackerProfile(['code_exec', 'terminal', 'waiting_tool', 'prober__probe']) },
    });
    await waitForUserTools(hearth, ['waiting_tool', 'prober__probe']);
  }, 120_000);

  afterAll(async () => {
    for (const socket of sockets) socket.close();
    await hearth?.close();
  });

  /** A turn whose one call does not end while the test runs. */
  async function startCall(call: { name: string; arguments: Record<string, unknown> }): Promise<void> {
    const socket = await hearth.connect(await hearth.createSession('attacker'));
    sockets.push(socket);
    // The person allows what the rules ask about (a user tool asks before it runs).
    socket.socket.on('message', (data) => {
      const event = JSON.parse(String(data)) as { type?: string; call_id?: string };
      if (event.type === 'approval_required') socket.send({ type: 'approve', call_id: event.call_id, decision: 'allow' });
    });
    // The model's answers are one queue: each turn takes its call before the next turn starts.
    hearth.llm.script({ toolCalls: [call] });
    socket.send({ type: 'message', content: 'Do it.' });
    await socket.next('tool_started', 30_000);
  }

  it('ends every one of them: nothing that ran under Hearth is left', async () => {
    await startCall({ name: 'terminal', arguments: { command: 'sleep 601', timeout_s: 600 } });
    await startCall({ name: 'code_exec', arguments: { language: 'python', code: 'import time\ntime.sleep(602)', timeout_s: 300 } });
    await startCall({ name: 'waiting_tool', arguments: {} });
    const running = await waitUntil(async () => {
      const under = await processesUnder(hearth.pid);
      const found = [...under, ...(await pastaServing(under))];
      return Object.values(kinds).every((matches) => found.some((process) => matches(process.command))) ? found : undefined;
    }, 60_000).catch(async (error: Error) => {
      const found = await processesUnder(hearth.pid);
      const missing = Object.entries(kinds).filter(([, matches]) => !found.some((process) => matches(process.command))).map(([kind]) => kind);
      throw new Error(`${error.message}: no ${missing.join(', ')} among ${found.map((process) => process.command.slice(0, 60)).join(' | ')}`);
    });
    for (const [kind, matches] of Object.entries(kinds)) expect(running.some((process) => matches(process.command)), kind).toBe(true);

    process.kill(hearth.pid, 'SIGKILL');

    const survivors = async () => {
      const left: RunningProcess[] = [];
      for (const process of running) if (await stillRuns(process)) left.push(process);
      return left;
    };
    const left = await waitUntil(async () => ((await survivors()).length === 0 ? [] : undefined), 15_000).catch(survivors);
    // A failing run leaves nothing behind either.
    for (const process of left) if (await stillRuns(process)) globalThis.process.kill(process.pid, 'SIGKILL');
    expect(left.map((process) => `${process.pid} ${process.command.slice(0, 120)}`)).toEqual([]);
  }, 120_000);
});
