import { spawn, type ChildProcess } from 'node:child_process';
import { watch } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { messageOf } from '../failure.ts';
import { hostAddresses, watchHostAddresses, type AddressWatch } from './host-addresses.ts';
import { diesWithHearth, parentIsHearth } from './dies-with-hearth.ts';
import { endProcessTree } from './process-tree.ts';

const startTimeoutMs = 10_000;

/**
 * The holder's program: it prints `ready`, then for each address Hearth writes to it, adds a
 * `prohibit` route and answers `closed <address>` or `failed <address>`. It alone holds
 * CAP_NET_ADMIN in the namespace: a jail entering it has no capability there.
 */
const holderProgram = [
  'echo ready',
  'while read -r address; do',
  '  if ip route replace prohibit "$address"; then echo "closed $address"; else echo "failed $address"; fi',
  'done',
].join('\n');

/** What the namespace tells its owner: an address of the machine closed to it, or that it cut itself off. */
export interface NetworkNamespaceEvents {
  closed?(addresses: string[]): void;
  cut?(reason: string): void;
}

/**
 * A network namespace with outbound access and no way back to the host: pasta (from passt)
 * gives it a copy of the host's address and routes, relays its connections through sockets of
 * its own, forwards no port in either direction (`-t/-u/-T/-U none`) and does not map the
 * gateway to the host's loopback (`--no-map-gw`), so 127.0.0.1 inside is the namespace's own
 * and nothing reaches the host's loopback, where Hearth listens.
 *
 * pasta relays a connection to any address through a socket on the host, so an address of this
 * machine that pasta does not copy into the namespace (a second interface, a bridge, a VPN)
 * would lead back to the host, and to Hearth where it listens on every address. Each gets a
 * `prohibit` route in the namespace before pasta starts, and so does every address the machine
 * gains while the namespace lives: `ip monitor` reports it, and `closeNewHostAddresses` (also
 * called by the jail before each process enters) adds the route. The address pasta copies in
 * stays the namespace's own: local routes come first. If a route cannot be added or the watch
 * ends, the namespace cuts itself off (pasta and the holder are killed): no way out at all
 * rather than a way back.
 *
 * The namespace is held by a bubblewrap process (it dies with Hearth); jails enter it with
 * `nsenter` before bubblewrap builds the rest.
 */
export class NetworkNamespace {
  private readonly closed = new Set<string>();
  private readonly replies = new Map<string, { resolve(): void; reject(error: Error): void }>();
  private latestCheck: Promise<void> = Promise.resolve();
  private queuedCheck: Promise<void> | undefined;
  private pastaPid: number | undefined;
  private watch: AddressWatch | undefined;
  private holderErrors = '';
  private ended = false;
  /** Set once pasta serves the namespace: from then on a closed address is news. */
  private serving = false;
  /** Why the namespace cut itself off, once it has. */
  cutReason: string | undefined;

  private constructor(
    private readonly holder: ChildProcess,
    /** The process whose user and network namespaces a jail enters. */
    readonly holderPid: number,
    private readonly environment: NodeJS.ProcessEnv,
    private readonly events: NetworkNamespaceEvents,
  ) {}

  static async create(environment: NodeJS.ProcessEnv, events: NetworkNamespaceEvents = {}): Promise<NetworkNamespace> {
    const holder = spawn(
      diesWithHearth[0]!,
      [...diesWithHearth.slice(1), 'bwrap', '--unshare-user', '--unshare-net', '--die-with-parent', '--cap-add', 'CAP_NET_ADMIN', '--ro-bind', '/', '/', '--info-fd', '3', 'sh', '-c', holderProgram],
      { stdio: ['pipe', 'pipe', 'pipe', 'pipe'], env: environment },
    );
    const holderPid = await readChildPid(holder, 3);
    const namespace = new NetworkNamespace(holder, holderPid, environment, events);
    try {
      await namespace.listen();
      namespace.watch = await watchHostAddresses(environment, {
        changed: () => void namespace.closeNewHostAddresses().catch(() => undefined),
        ended: (reason) => namespace.cut(`the watch on this machine's addresses ended: ${reason}`),
      });
      await namespace.closeNewHostAddresses();
      namespace.pastaPid = await startPasta(holderPid, environment);
      namespace.serving = true;
    } catch (error) {
      namespace.close();
      throw error;
    }
    return namespace;
  }

  /** The command prefix that runs a program inside this namespace. */
  enter(): string[] {
    return ['nsenter', '-t', String(this.holderPid), '-U', '-n', '--preserve-credentials', '--'];
  }

  /**
   * Adds a `prohibit` route for each address this machine has that the namespace does not yet
   * refuse; resolves once they are in. Checks that overlap share one run. If a route cannot be
   * added, the namespace cuts itself off and this rejects.
   */
  closeNewHostAddresses(): Promise<void> {
    if (this.cutReason !== undefined) return Promise.reject(new Error(this.cutReason));
    if (this.queuedCheck === undefined) {
      const check = this.latestCheck
        .catch(() => undefined)
        .then(() => {
          this.queuedCheck = undefined;
          return this.closeNew();
        });
      this.queuedCheck = check;
      this.latestCheck = check;
    }
    return this.queuedCheck;
  }

  private async closeNew(): Promise<void> {
    if (this.cutReason !== undefined) throw new Error(this.cutReason);
    try {
      const fresh = (await hostAddresses(this.environment)).filter((address) => !this.closed.has(address));
      if (fresh.length === 0) return;
      await Promise.all(fresh.map((address) => this.closeOne(address)));
      if (this.serving) this.events.closed?.(fresh);
    } catch (error) {
      const reason = `could not close the jail's way to this machine's addresses: ${messageOf(error)}`;
      this.cut(reason);
      throw new Error(reason);
    }
  }

  private closeOne(address: string): Promise<void> {
    return new Promise((resolve, reject) => {
      if (this.cutReason !== undefined) return reject(new Error(this.cutReason));
      const timer = setTimeout(() => {
        this.replies.delete(address);
        reject(new Error(`the namespace's holder did not answer for ${address} within 10 s`));
      }, startTimeoutMs);
      this.replies.set(address, {
        resolve: () => {
          clearTimeout(timer);
          this.closed.add(address);
          resolve();
        },
        reject: (error) => {
          clearTimeout(timer);
          reject(error);
        },
      });
      this.holder.stdin?.write(`${address}\n`);
    });
  }

  /** Waits for the holder's `ready` and from then on settles each address with the holder's answer. */
  private async listen(): Promise<void> {
    this.holder.stderr?.on('data', (chunk: Buffer) => (this.holderErrors = (this.holderErrors + chunk.toString()).slice(-2000)));
    this.holder.stdin?.on('error', () => undefined);
    const exited = new Promise<string>((resolve) => this.holder.once('exit', () => resolve(`the namespace's holder exited: ${this.holderErrors.trim() || 'without a message'}`)));
    const ready = new Promise<void>((resolve) => {
      createInterface({ input: this.holder.stdout! }).on('line', (line) => {
        if (line === 'ready') return resolve();
        const [outcome, address = ''] = line.split(' ');
        const reply = this.replies.get(address);
        if (reply === undefined) return;
        this.replies.delete(address);
        if (outcome === 'closed') reply.resolve();
        else reply.reject(new Error(`ip route replace prohibit ${address}: ${this.holderErrors.trim() || 'failed'}`));
      });
    });
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<string>((resolve) => (timer = setTimeout(() => resolve('the network namespace was not ready within 10 s'), startTimeoutMs)));
    const failure = await Promise.race([ready.then(() => undefined), exited, timedOut]);
    clearTimeout(timer);
    if (failure !== undefined) throw new Error(failure);
    void exited.then((reason) => {
      for (const reply of this.replies.values()) reply.reject(new Error(reason));
      this.replies.clear();
      this.cut(reason);
    });
  }

  /** No way out at all rather than a way back: pasta and the holder go, the jails inside keep only their loopback. */
  private cut(reason: string): void {
    if (this.cutReason !== undefined || this.ended) return;
    this.cutReason = reason;
    this.close();
    // While it is being made, its maker hears of it as the error.
    if (this.serving) this.events.cut?.(reason);
  }

  close(): void {
    this.ended = true;
    this.watch?.stop();
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
 * Starts pasta for the holder's namespace and resolves with its process id once it serves the
 * namespace (it writes its pid file then). It runs in the foreground, Hearth's child, under
 * setpriv's parent-death signal: daemonized, it would outlive Hearth, holding the namespace alive
 * (it quits with its namespace only when that is bound to a file, and /proc/<pid>/ns is not).
 */
async function startPasta(holderPid: number, environment: NodeJS.ProcessEnv): Promise<number> {
  const folder = await mkdtemp(path.join(os.tmpdir(), 'hearth-pasta-'));
  const pidFile = path.join(folder, 'pid');
  const uid = process.getuid?.() ?? 0;
  const gid = process.getgid?.() ?? 0;
  const pasta = spawn(
    diesWithHearth[0]!,
    [
      ...diesWithHearth.slice(1),
      // Hearth died before setpriv set the signal: nothing would end pasta, so it does not start.
      '/bin/sh', '-c', `${parentIsHearth('$0')} && exec "$@"`, String(process.pid),
      'pasta', '--foreground',
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
  pasta.stderr?.setEncoding('utf8').on('data', (chunk: string) => (errors = (errors + chunk).slice(-2000)));
  const watcher = watch(folder);
  let timer: NodeJS.Timeout | undefined;
  try {
    const serving = new Promise<true>((resolve) => {
      const check = () => void readFile(pidFile, 'utf8').then((text) => text.trim() !== '' && resolve(true), () => undefined);
      watcher.on('change', check);
      check();
    });
    const exited = new Promise<string>((resolve) => {
      pasta.once('exit', (code, signal) => resolve(errorLines(errors) || `pasta exited with ${signal ?? code}`));
      pasta.once('error', (error) => resolve(error.message));
    });
    const timedOut = new Promise<string>((resolve) => (timer = setTimeout(() => resolve('pasta did not set the namespace up within 10 s'), startTimeoutMs)));
    const outcome = await Promise.race([serving, exited, timedOut]);
    if (outcome !== true) {
      pasta.kill('SIGKILL');
      throw new Error(`pasta could not give the jail a network: ${outcome}`);
    }
    return pasta.pid!;
  } finally {
    clearTimeout(timer);
    watcher.close();
    await rm(folder, { recursive: true, force: true });
  }
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
      if (child.pid !== undefined) endProcessTree(child.pid);
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
