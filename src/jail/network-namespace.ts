import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';

const startTimeoutMs = 10_000;

/**
 * A network namespace with outbound access and no way back to the host: pasta (from passt)
 * gives it a copy of the host's address and routes, relays its connections through sockets of
 * its own, forwards no port in either direction (`-t/-u/-T/-U none`) and does not map the
 * gateway to the host's loopback (`--no-map-gw`), so 127.0.0.1 inside is the namespace's own
 * and nothing reaches the host's loopback, where Hearth listens.
 *
 * The namespace is held by a sleeping bubblewrap process (it dies with Hearth); jails enter it
 * with `nsenter` before bubblewrap builds the rest.
 */
export class NetworkNamespace {
  private constructor(
    private readonly holder: ChildProcess,
    /** The process whose user and network namespaces a jail enters. */
    readonly holderPid: number,
    private readonly pastaPid: number | undefined,
  ) {}

  static async create(environment: NodeJS.ProcessEnv): Promise<NetworkNamespace> {
    // The holder closes the way back to this machine's addresses before it sleeps (closedHostAddresses).
    const routes = hostAddresses().map(({ family, address }) => `ip ${family} route add prohibit ${address}`).join(' && ');
    const holder = spawn(
      'bwrap',
      ['--unshare-user', '--unshare-net', '--die-with-parent', '--cap-add', 'CAP_NET_ADMIN', '--ro-bind', '/', '/', '--info-fd', '3', 'sh', '-c', `${routes || 'true'} && echo ready && exec sleep infinity`],
      { stdio: ['ignore', 'pipe', 'pipe', 'pipe'], env: environment },
    );
    const holderPid = await readChildPid(holder, 3);
    await closedHostAddresses(holder);
    const pidFile = path.join(os.tmpdir(), `hearth-pasta-${randomUUID()}.pid`);
    const uid = process.getuid?.() ?? 0;
    const gid = process.getgid?.() ?? 0;
    const pasta = spawn(
      'pasta',
      [
        '--config-net', '--quiet', '--no-map-gw',
        '-t', 'none', '-u', 'none', '-T', 'none', '-U', 'none',
        '--runas', `${uid}:${gid}`,
        '--pid', pidFile,
        '--userns', `/proc/${holderPid}/ns/user`,
        '--netns', `/proc/${holderPid}/ns/net`,
      ],
      { stdio: ['ignore', 'ignore', 'pipe'], env: environment },
    );
    let errors = '';
    pasta.stderr?.setEncoding('utf8').on('data', (chunk: string) => (errors += chunk));
    const [code] = (await Promise.race([once(pasta, 'exit'), once(pasta, 'error').then(([error]) => [error])])) as [number | Error | null];
    // pasta forks into the background once the namespace is set up; the foreground process then exits with 0.
    const pastaPid = Number((await readFile(pidFile, 'utf8').catch(() => '')).trim()) || undefined;
    await rm(pidFile, { force: true });
    if (code !== 0) {
      holder.kill('SIGKILL');
      if (pastaPid !== undefined) process.kill(pastaPid, 'SIGKILL');
      const reason = code instanceof Error ? code.message : errorLines(errors) || `pasta exited with ${String(code)}`;
      throw new Error(`pasta could not give the jail a network: ${reason}`);
    }
    return new NetworkNamespace(holder, holderPid, pastaPid);
  }

  /** The command prefix that runs a program inside this namespace. */
  enter(): string[] {
    return ['nsenter', '-t', String(this.holderPid), '-U', '-n', '--preserve-credentials', '--'];
  }

  close(): void {
    this.holder.kill('SIGKILL');
    if (this.pastaPid === undefined) return;
    try {
      process.kill(this.pastaPid, 'SIGKILL');
    } catch {
      // Gone already.
    }
  }
}

/**
 * pasta relays a connection to any address through a socket on the host, so an address of this
 * machine that pasta does not copy into the namespace (a second interface, a bridge, a VPN)
 * would lead back to the host, and to Hearth where it listens on every address. Each gets a
 * `prohibit` route in the namespace, added by the holder (which alone holds CAP_NET_ADMIN
 * there: a jail entering the namespace has no capability in it and cannot remove the routes).
 * The address pasta copies in stays the namespace's own: local routes come first.
 */
function hostAddresses(): { family: '-4' | '-6'; address: string }[] {
  return Object.values(os.networkInterfaces())
    .flat()
    .filter((entry) => entry !== undefined && !entry.internal && !entry.address.startsWith('fe80'))
    .map((entry) => (entry!.family === 'IPv6' ? { family: '-6', address: `${entry!.address}/128` } : { family: '-4', address: `${entry!.address}/32` }));
}

/** Waits for the holder's `ready`, printed once its routes are in place; fails with ip's complaint otherwise. */
async function closedHostAddresses(holder: ChildProcess): Promise<void> {
  let printed = '';
  let errors = '';
  holder.stderr?.on('data', (chunk: Buffer) => (errors += chunk.toString()));
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => fail(new Error('the network namespace was not ready within 10 s')), startTimeoutMs);
    function fail(error: Error) {
      clearTimeout(timer);
      holder.kill('SIGKILL');
      reject(error);
    }
    holder.stdout?.on('data', (chunk: Buffer) => {
      printed += chunk.toString();
      if (printed.includes('ready')) {
        clearTimeout(timer);
        resolve();
      }
    });
    holder.once('exit', () => fail(new Error(`could not close the jail's way to this machine's addresses: ${errors.trim() || 'the holder exited'}`)));
  });
}

/** pasta's stderr without its complaints about syslog and ICMP, which do not stop it. */
function errorLines(text: string): string {
  return text
    .split('\n')
    .filter((line) => line.trim() !== '' && !/syslog|ping_group_range|ICMP/.test(line))
    .join('; ');
}

/** bubblewrap writes `{"child-pid": N, …}` to its info descriptor once the namespaces exist. */
export async function readChildPid(child: ChildProcess, infoFd: number): Promise<number> {
  const info = child.stdio[infoFd];
  if (!info) throw new Error('bubblewrap was started without an info descriptor');
  let text = '';
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer | string) => (stderr += chunk.toString()));
  return await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => fail(new Error('bubblewrap did not start within 10 s')), startTimeoutMs);
    function fail(error: Error) {
      clearTimeout(timer);
      child.kill('SIGKILL');
      reject(error);
    }
    info.on('data', (chunk: Buffer) => {
      text += chunk.toString('utf8');
      const match = /"child-pid":\s*(\d+)/.exec(text);
      if (match) {
        clearTimeout(timer);
        resolve(Number(match[1]));
      }
    });
    child.once('error', (error) => fail(error));
    child.once('exit', (code) => fail(new Error(`bubblewrap exited with ${code}: ${stderr.trim()}`)));
  });
}
