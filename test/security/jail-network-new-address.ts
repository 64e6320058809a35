// Issue 32 (found while running the suite in parallel): a jail with network gets a `prohibit`
// route for every address of this machine, so that pasta's relay does not lead back to Hearth
// where it listens on every address. The list was read once, when the namespace was made: an
// address the machine gained later (a VPN coming up, a new bridge, DHCP on a second interface)
// stayed open, and jail-mcp.test.ts's prober reached Hearth (`answered 401`) at the veth address
// another test file had just made. Here the machine gains an address (a LAN device's veth, on
// subnets no other test uses) after the jails' namespaces exist, with a listener on every
// address standing for Hearth, and:
// - a new process in a namespace made earlier (server_admin's host jails share one) reaches the
//   device but not the listener at the new address: closed before it enters;
// - a process already running (an MCP server granted network) reaches it no more once the
//   namespace's watch has closed it, which Hearth logs;
// - an address on a link that is down counts too (os.networkInterfaces() leaves it out);
// - a jailed process cannot remove a route, nor a host jail write to the holder that adds them.
// First with the Jail class as root, then through the whole server run by the unprivileged user.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config.ts';
import { hostAddresses } from '../../src/jail/host-addresses.ts';
import { Jail, probeJail } from '../../src/jail/jail.ts';
import type { JailedCommand, JailSpec } from '../../src/jail/jail-spec.ts';
import type { EventSocket } from '../support/event-socket.ts';
import { lanDeviceUnavailable, startLanDevice, type LanDevice } from '../support/lan-device.ts';
import { fixtureServer } from '../support/mcp-servers.ts';
import { unprivilegedUser } from '../support/unprivileged-user.ts';
import { waitUntil } from '../support/wait-until.ts';
import { attackerProfile, callTools, startJailedHearth, type JailedHearth } from './jail-harness.ts';

const probed = await probeJail();
const noDevice = lanDeviceUnavailable();
const noNetwork = probed.status.state !== 'on' || !probed.pastaInstalled ? 'no jail with network here (bubblewrap or pasta missing)' : undefined;
const skipped = noDevice ?? noNetwork;

/**
 * Fetches each URL given on its command line, or on each line of its standard input while it runs (a line may start
 * with `timeout=<ms>`, 3,000 otherwise); prints one JSON object per batch: URL → `answered <status>` or `error <code>`.
 */
const fetcher = `
const fetchEach = async (urls, timeoutMs = 3000) => {
  const found = {};
  for (const url of urls) {
    try { found[url] = 'answered ' + (await fetch(url, { signal: AbortSignal.timeout(timeoutMs) })).status; }
    catch (error) { found[url] = 'error ' + (error.cause?.code ?? error.name); }
  }
  console.log(JSON.stringify(found));
};
if (process.argv.length > 1) fetchEach(process.argv.slice(1));
else require('node:readline').createInterface({ input: process.stdin }).on('line', (line) => {
  const words = line.split(' ');
  const timeout = words[0].startsWith('timeout=') ? Number(words.shift().slice('timeout='.length)) : undefined;
  fetchEach(words, timeout);
});`;

/** What the fetcher printed for `urls`: run once in its own jail, or asked of one already running. */
async function fetchOnce(command: JailedCommand): Promise<Record<string, string>> {
  const child = spawn(command.executable, command.args, { env: command.environment, stdio: ['ignore', 'pipe', 'pipe'] });
  let printed = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (printed += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (printed += chunk));
  await once(child, 'close');
  command.release();
  const line = printed.split('\n').find((candidate) => candidate.startsWith('{'));
  if (line === undefined) throw new Error(`the jailed fetcher printed no answer: ${printed}`);
  return JSON.parse(line) as Record<string, string>;
}

class RunningFetcher {
  private readonly answers: Array<(found: Record<string, string>) => void> = [];
  private readonly child: ChildProcess;

  constructor(private readonly command: JailedCommand) {
    this.child = spawn(command.executable, command.args, { env: command.environment, stdio: ['pipe', 'pipe', 'inherit'] });
    createInterface({ input: this.child.stdout! }).on('line', (line) => this.answers.shift()?.(JSON.parse(line) as Record<string, string>));
  }

  ask(urls: string[], timeoutMs?: number): Promise<Record<string, string>> {
    return new Promise((resolve) => {
      this.answers.push(resolve);
      this.child.stdin!.write(`${[...(timeoutMs === undefined ? [] : [`timeout=${timeoutMs}`]), ...urls].join(' ')}\n`);
    });
  }

  async stop(): Promise<void> {
    if (this.child.exitCode === null && this.child.signalCode === null) {
      this.child.kill('SIGKILL');
      await once(this.child, 'exit');
    }
    this.command.release();
  }
}

/** Registers this suite's hooks and tests where it is called (test/security/host-network.test.ts). */
export function jailNetworkNewAddress(): void {
  describe.skipIf(skipped !== undefined)(`an address this machine gains after a jail's namespace was made${skipped ? ` (skipped: ${skipped})` : ''}`, () => {
    const infos: string[] = [];
    const logger = { warn: (message: string) => infos.push(message), info: (message: string) => infos.push(message) };
    let scratch: string;
    let jail: Jail;
    let listener: Server;
    let port: number;
    let device: LanDevice | undefined;
    let running: RunningFetcher | undefined;
    const strict = (): JailSpec => ({ kind: 'strict', writable: [scratch], cwd: scratch, network: true });
    const host = (): JailSpec => ({ kind: 'host', writable: [], cwd: '/' });
    const wrapFetcher = (spec: JailSpec, urls: string[]) => jail.wrap(process.execPath, ['-e', fetcher, ...urls], spec, { PATH: process.env.PATH ?? '/usr/bin:/bin' });

    beforeAll(async () => {
      scratch = mkdtempSync(path.join(tmpdir(), 'hearth-new-address-'));
      jail = new Jail({ config: parseConfig({ DATA_DIR: scratch }), logger }, probed);
      // Hearth with HOST=:: listens on every address of the machine, those it gains later included.
      listener = createServer((_request, response) => response.writeHead(401).end());
      listener.listen(0, '::');
      await once(listener, 'listening');
      port = (listener.address() as AddressInfo).port;
    });

    afterAll(async () => {
      await running?.stop();
      jail?.close();
      listener?.close();
      await device?.close();
      if (scratch) rmSync(scratch, { recursive: true, force: true });
    });

    it('closes it to a new process of a namespace made before, and to a process already running, which still reach the device', async () => {
      const [known] = (await hostAddresses({ PATH: process.env.PATH })).filter((address) => address.endsWith('/32'));
      const knownUrl = `http://${known!.replace(/\/32$/, '')}:${port}/known`;
      // The namespaces exist before the address: server_admin's shared one, and an MCP server's own, running.
      expect((await fetchOnce(await wrapFetcher(host(), [knownUrl])))[knownUrl]).toMatch(/^error/);
      running = new RunningFetcher(await wrapFetcher(strict(), []));
      expect((await running.ask([knownUrl]))[knownUrl]).toMatch(/^error/);

      device = await startLanDevice(32);
      const hearthUrl = `http://${device.hostAddress}:${port}/approvals`;
      const deviceUrl = `http://${device.address}:${device.port}/device`;
      // Outside any jail the new address leads to the listener: what the jail must not reach.
      expect((await fetch(hearthUrl)).status).toBe(401);

      const fromHostJail = await fetchOnce(await wrapFetcher(host(), [hearthUrl, deviceUrl]));
      expect(fromHostJail[hearthUrl], 'a new process in the shared host namespace').toMatch(/^error/);
      expect(fromHostJail[deviceUrl]).toBe('answered 200');

      const closed = await waitUntil(() => infos.some((line) => line.includes(`${device!.hostAddress}/32`)), 10_000).then(
        () => true,
        () => false,
      );
      const fromRunning = await running.ask([hearthUrl, deviceUrl]);
      expect(fromRunning[hearthUrl], 'a process already running').toMatch(/^error/);
      expect(fromRunning[deviceUrl]).toBe('answered 200');
      expect(closed, `the jail logged no closing of ${device.hostAddress}: ${infos.join('; ')}`).toBe(true);

      const fromNewJail = await fetchOnce(await wrapFetcher(strict(), [hearthUrl, deviceUrl]));
      expect(fromNewJail[hearthUrl], 'a new strict jail').toMatch(/^error/);
      expect(fromNewJail[deviceUrl]).toBe('answered 200');
    }, 60_000);

    it('a namespace that can no longer close addresses (its holder killed) cuts itself off: no way out rather than a way back', async () => {
      const command = await wrapFetcher(strict(), []);
      const holderPid = Number(command.args[command.args.indexOf('-t') + 1]);
      const fetcherInCut = new RunningFetcher(command);
      try {
        const deviceUrl = `http://${device!.address}:${device!.port}/before-cut`;
        expect((await fetcherInCut.ask([deviceUrl]))[deviceUrl]).toBe('answered 200');
        process.kill(holderPid, 'SIGKILL');
        await waitUntil(() => infos.some((line) => line.includes('cut itself off')));
        const afterUrl = `http://${device!.address}:${device!.port}/after-cut`;
        // Cut off, the connection hangs until the fetcher gives up; a second is far longer than the device takes to answer.
        expect((await fetcherInCut.ask([afterUrl], 1_000))[afterUrl]).toMatch(/^error/);
        expect(device!.requests()).not.toContain('/after-cut');
      } finally {
        await fetcherInCut.stop();
      }
    });

    it('closes an address on a link that is down (Docker\'s bridge without a container), which the host reaches all the same', async () => {
      const suffix = randomBytes(3).toString('hex');
      const [hostSide, peer] = [`hd${suffix}h`, `hd${suffix}d`];
      const ip = (...args: string[]) => spawnSync('ip', args, { encoding: 'utf8' });
      try {
        expect(ip('link', 'add', hostSide, 'type', 'veth', 'peer', 'name', peer).status).toBe(0);
        expect(ip('addr', 'add', '10.200.34.1/24', 'dev', hostSide).status).toBe(0);
        const hearthUrl = `http://10.200.34.1:${port}/down-link`;
        expect((await fetch(hearthUrl)).status).toBe(401);
        expect((await fetchOnce(await wrapFetcher(strict(), [hearthUrl])))[hearthUrl]).toMatch(/^error/);
      } finally {
        ip('link', 'delete', hostSide);
      }
    });

    it("a host jail, which sees the holder in /proc, cannot write to the holder's pipes (the addresses it closes, its answers)", async () => {
      const first = await jail.wrap('/bin/true', [], host(), { PATH: process.env.PATH ?? '/usr/bin:/bin' });
      const holderPid = first.args[first.args.indexOf('-t') + 1];
      first.release();
      const script = `for fd in 0 1; do echo 203.0.113.9/32 > /proc/${holderPid}/fd/$fd && echo "wrote $fd"; done; ls /proc/${holderPid} > /dev/null && echo "holder visible"`;
      const command = await jail.wrap('/bin/sh', ['-c', script], host(), { PATH: process.env.PATH ?? '/usr/bin:/bin' });
      const run = spawnSync(command.executable, command.args, { env: command.environment, encoding: 'utf8' });
      command.release();
      expect(run.stdout).toContain('holder visible');
      expect(run.stdout).not.toContain('wrote');
      expect(run.stderr).toMatch(/Permission denied/);
    });

    it('a jailed process cannot remove a prohibit route', async () => {
      const [known] = await hostAddresses({ PATH: process.env.PATH });
      const command = await jail.wrap('/bin/sh', ['-c', `ip route del prohibit ${known}; echo "removal exited $?"; ip route show table all type prohibit`], strict(), { PATH: process.env.PATH ?? '/usr/bin:/bin' });
      const run = spawnSync(command.executable, command.args, { env: command.environment, encoding: 'utf8' });
      command.release();
      expect(run.stderr).toMatch(/Operation not permitted/);
      expect(run.stdout).toMatch(/removal exited [1-9]/);
      expect(run.stdout).toContain(`prohibit ${known!.replace(/\/(32|128)$/, '')}`);
    });
  });

  describe.skipIf(skipped !== undefined)(`the same through Hearth run by the unprivileged user${skipped ? ` (skipped: ${skipped})` : ''}`, () => {
    let hearth: JailedHearth;
    let device: LanDevice | undefined;
    let adminSocket: EventSocket;
    let attackerSocket: EventSocket;
    const fetchCommand = (urls: string[]) => ({ name: 'terminal', arguments: { command: `node -e '${fetcher.replace(/'/g, `'"'"'`)}' ${urls.join(' ')}` } });

    beforeAll(async () => {
      hearth = await startJailedHearth({
        user: await unprivilegedUser(),
        environment: { LOG_LEVEL: 'info' },
        mcpConfig: { mcpServers: { prober: { ...fixtureServer(), jail: { paths: {}, network: true } } } },
        profiles: { attacker: attackerProfile(['prober__probe']) },
      });
      await waitUntil(async () => {
        const servers = (await hearth.request('GET', '/agents/tools')).body.servers as { status: string; message?: string }[];
        if (servers.some((server) => server.status === 'failed')) throw new Error(`the prober failed: ${JSON.stringify(servers)}`);
        return servers.length === 1 && servers[0]!.status === 'connected';
      }, 60_000);
      adminSocket = await hearth.connect(await hearth.createSession('server_admin'));
      attackerSocket = await hearth.connect(await hearth.createSession('attacker'));
    }, 120_000);

    afterAll(async () => {
      adminSocket?.close();
      attackerSocket?.close();
      await hearth?.close();
      await device?.close();
    });

    it("a new terminal process in server_admin's shared namespace, and the MCP server already running, reach the device and not Hearth at the new address", async () => {
      // The shared host namespace is made by the first terminal command.
      const [first] = await callTools(hearth, adminSocket, [fetchCommand([`http://127.0.0.1:${hearth.port}/health`])], { allowAsked: true });
      expect(first!.result).toMatch(/error/);

      device = await startLanDevice(33);
      const hearthUrl = `http://${device.hostAddress}:${hearth.port}/approvals?status=pending`;
      const deviceUrl = `http://${device.address}:${device.port}/device`;
      expect((await fetch(hearthUrl)).status).toBe(401);

      const [fromTerminal] = await callTools(hearth, adminSocket, [fetchCommand([hearthUrl, deviceUrl])], { allowAsked: true });
      const found = JSON.parse(/\{.*\}/.exec(fromTerminal!.result)![0]) as Record<string, string>;
      expect(found[hearthUrl], 'a new terminal process').toMatch(/^error/);
      expect(found[deviceUrl]).toBe('answered 200');

      // Both namespaces (the host jails' and the prober's) log the address once closed to them.
      const closings = () => hearth.output().split('\n').filter((line) => line.includes(`${device!.hostAddress}/32`)).length;
      const closed = await waitUntil(() => closings() >= 2, 10_000).then(
        () => true,
        () => false,
      );
      const [probe] = await callTools(hearth, attackerSocket, [{ name: 'prober__probe', arguments: { reads: [], urls: [hearthUrl, deviceUrl] } }], { timeoutMs: 60_000 });
      const probed = JSON.parse(probe!.result) as { urls: Record<string, string> };
      expect(probed.urls[hearthUrl], 'the MCP server already running').toMatch(/^error/);
      expect(probed.urls[deviceUrl]).toMatch(/^answered 200/);
      expect(closed, `Hearth logged ${closings()} closings of ${device.hostAddress}`).toBe(true);

      const [removal] = await callTools(hearth, adminSocket, [{ name: 'terminal', arguments: { command: `ip route del prohibit ${device.hostAddress}/32` } }], { allowAsked: true });
      expect(removal!.result).toMatch(/Operation not permitted/);
    }, 180_000);
  });
}
