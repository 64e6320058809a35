// A device on the local network, for tests of what a jail with network reaches: an HTTP server
// in a network namespace of its own, joined to this machine by a veth pair (this machine
// 10.200.<subnet>.1/24, the device 10.200.<subnet>.2/24), as a NAS or a Home Assistant box on
// the LAN would be. Making namespaces needs root (CAP_NET_ADMIN); `lanDeviceUnavailable` says
// why it cannot be made, for a test to skip with that reason.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { randomBytes } from 'node:crypto';

export interface LanDevice {
  /** The device's address and the port its HTTP server listens on. */
  address: string;
  port: number;
  /** This machine's address on the device's network (the veth's host side). */
  hostAddress: string;
  /** What the device answers to every request. */
  answer: string;
  /** Requests the device received, by path. */
  requests(): string[];
  close(): Promise<void>;
}

function ip(...args: string[]): { ok: boolean; output: string } {
  const run = spawnSync('ip', args, { encoding: 'utf8' });
  return { ok: run.status === 0, output: `${run.stderr ?? ''}${run.error?.message ?? ''}`.trim() };
}

/** Why no device can be made here (not root, no `ip`, namespaces refused), or undefined when one can. */
export function lanDeviceUnavailable(): string | undefined {
  if (process.getuid?.() !== 0) return 'making a network namespace needs root (CAP_NET_ADMIN); the tests run as a user';
  const name = `hearth-probe-${process.pid}`;
  const added = ip('netns', 'add', name);
  if (!added.ok) return `ip netns add is not permitted here: ${added.output}`;
  ip('netns', 'delete', name);
  return undefined;
}

const port = 8080;

/** The device on 10.200.<subnet>.0/24: each test file that runs at the same time uses a subnet of its own. */
export async function startLanDevice(subnet: number): Promise<LanDevice> {
  const suffix = randomBytes(3).toString('hex');
  const namespace = `hearth-lan-${suffix}`;
  const hostSide = `hl${suffix}h`;
  const deviceSide = `hl${suffix}d`;
  const hostAddress = `10.200.${subnet}.1`;
  const address = `10.200.${subnet}.2`;
  const answer = `lan device ${randomBytes(4).toString('hex')}`;
  const cleanUp = () => {
    ip('link', 'delete', hostSide);
    ip('netns', 'delete', namespace);
  };
  const steps = [
    ['netns', 'add', namespace],
    ['link', 'add', hostSide, 'type', 'veth', 'peer', 'name', deviceSide],
    ['link', 'set', deviceSide, 'netns', namespace],
    ['addr', 'add', `${hostAddress}/24`, 'dev', hostSide],
    ['link', 'set', hostSide, 'up'],
    ['netns', 'exec', namespace, 'ip', 'addr', 'add', `${address}/24`, 'dev', deviceSide],
    ['netns', 'exec', namespace, 'ip', 'link', 'set', deviceSide, 'up'],
    ['netns', 'exec', namespace, 'ip', 'link', 'set', 'lo', 'up'],
  ];
  for (const step of steps) {
    const done = ip(...step);
    if (!done.ok) {
      cleanUp();
      throw new Error(`ip ${step.join(' ')}: ${done.output}`);
    }
  }
  const program = `
const http = require('node:http');
http.createServer((request, response) => { console.log('request ' + request.url); response.end(${JSON.stringify(answer)}); })
  .listen(${port}, '0.0.0.0', () => console.log('listening'));`;
  const server: ChildProcess = spawn('ip', ['netns', 'exec', namespace, process.execPath, '-e', program], { stdio: ['ignore', 'pipe', 'pipe'] });
  const received: string[] = [];
  let printed = '';
  const exited = once(server, 'exit');
  try {
    await new Promise<void>((resolve, reject) => {
      server.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
        printed += chunk;
        for (const line of chunk.split('\n')) if (line.startsWith('request ')) received.push(line.slice('request '.length));
        if (printed.includes('listening')) resolve();
      });
      server.stderr?.setEncoding('utf8').on('data', (chunk: string) => (printed += chunk));
      server.once('exit', (code) => reject(new Error(`the device's server exited with ${code}: ${printed}`)));
    });
  } catch (error) {
    cleanUp();
    throw error;
  }
  return {
    address,
    port,
    hostAddress,
    answer,
    requests: () => [...received],
    async close() {
      if (server.exitCode === null && server.signalCode === null) {
        server.kill('SIGKILL');
        await exited;
      }
      cleanUp();
    },
  };
}
