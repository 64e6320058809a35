import { execFile, spawn } from 'node:child_process';
import { readdir, readFile, readlink } from 'node:fs/promises';
import { promisify } from 'node:util';
import { bindInterfaceAddresses, type InterfaceAddress, type ReadInterfaceAddresses } from './interface-addresses.ts';

const run = promisify(execFile);
const listTimeoutMs = 10_000;
const subscribeTimeoutMs = 10_000;

let readInterfaceAddresses: ReadInterfaceAddresses | undefined;

/**
 * Every address of this machine as a host prefix (`192.0.2.2/32`, `fd00::2/128`), from
 * getifaddrs(3) in this process (interface-addresses.ts), else from `ip -j address`: not
 * os.networkInterfaces(), which lists only interfaces that are up and running, yet an address
 * on a link that is down or without carrier (Docker's bridge with no container, a veth whose
 * peer is down) is reached from this machine all the same. Loopback and link-local addresses
 * are left out: the namespace has its own.
 */
export async function hostAddresses(environment: NodeJS.ProcessEnv): Promise<string[]> {
  readInterfaceAddresses ??= bindInterfaceAddresses();
  const listed = readInterfaceAddresses() ?? (await addressesFromIp(environment));
  const addresses = listed
    .filter((entry) => !isLoopbackOrLinkLocal(entry.address))
    .map((entry) => `${entry.address}/${entry.family === 'inet' ? 32 : 128}`);
  return [...new Set(addresses)];
}

async function addressesFromIp(environment: NodeJS.ProcessEnv): Promise<InterfaceAddress[]> {
  const { stdout } = await run('ip', ['-j', 'address', 'show'], { env: environment, timeout: listTimeoutMs });
  const links = JSON.parse(stdout) as { addr_info?: { family?: string; local?: string }[] }[];
  return links
    .flatMap((link) => link.addr_info ?? [])
    .flatMap((entry) => (entry.local !== undefined && (entry.family === 'inet' || entry.family === 'inet6') ? [{ family: entry.family, address: entry.local }] : []));
}

function isLoopbackOrLinkLocal(address: string): boolean {
  return address.startsWith('127.') || address === '::1' || /^fe[89ab]/i.test(address);
}

export interface AddressWatch {
  stop(): void;
}

/**
 * Calls `changed` whenever this machine gains or loses an address (`ip monitor address`), from
 * the moment it resolves: it waits until the monitor's netlink socket has joined the address
 * groups, so no change after that is missed. `ended` is called if the monitor stops on its own.
 */
export async function watchHostAddresses(environment: NodeJS.ProcessEnv, handlers: { changed(): void; ended(reason: string): void }): Promise<AddressWatch> {
  // setpriv (util-linux, beside prlimit) has the kernel kill the monitor if Hearth dies without closing it.
  const monitor = spawn('setpriv', ['--pdeathsig', 'KILL', 'ip', '-o', 'monitor', 'address'], { stdio: ['ignore', 'pipe', 'pipe'], env: environment });
  let stopped = false;
  let errors = '';
  monitor.stderr.setEncoding('utf8').on('data', (chunk: string) => (errors += chunk));
  monitor.stdout.on('data', () => handlers.changed());
  const exited = new Promise<string>((resolve) => {
    monitor.once('error', (error) => resolve(error.message));
    monitor.once('exit', (code, signal) => resolve(errors.trim() || `ip monitor exited with ${signal ?? code}`));
  });
  const watch = {
    stop() {
      stopped = true;
      monitor.kill('SIGKILL');
    },
  };
  const subscribed = await Promise.race([waitForSubscription(monitor.pid), exited.then((reason) => new Error(reason))]);
  if (subscribed instanceof Error) {
    watch.stop();
    throw new Error(`could not watch this machine's addresses: ${subscribed.message}`);
  }
  void exited.then((reason) => {
    if (!stopped) handlers.ended(reason);
  });
  return watch;
}

/** Resolves once a netlink socket of the process has joined a multicast group (/proc/net/netlink, column Groups); an Error after the timeout. */
async function waitForSubscription(pid: number | undefined): Promise<true | Error> {
  const deadline = Date.now() + subscribeTimeoutMs;
  while (pid !== undefined && Date.now() < deadline) {
    if (await hasSubscribedSocket(pid)) return true;
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  return new Error(`ip monitor did not subscribe within ${subscribeTimeoutMs / 1000} s`);
}

async function hasSubscribedSocket(pid: number): Promise<boolean> {
  const descriptors = await readdir(`/proc/${pid}/fd`).catch(() => [] as string[]);
  const sockets = new Set<string>();
  for (const descriptor of descriptors) {
    const target = await readlink(`/proc/${pid}/fd/${descriptor}`).catch(() => '');
    const inode = /^socket:\[(\d+)\]$/.exec(target)?.[1];
    if (inode !== undefined) sockets.add(inode);
  }
  if (sockets.size === 0) return false;
  const table = await readFile('/proc/net/netlink', 'utf8').catch(() => '');
  // sk Eth Pid Groups Rmem Wmem Dump Locks Drops Inode
  return table
    .split('\n')
    .slice(1)
    .map((line) => line.trim().split(/\s+/))
    .some((columns) => columns.length >= 10 && /[1-9a-f]/i.test(columns[3]!) && sockets.has(columns[9]!));
}
