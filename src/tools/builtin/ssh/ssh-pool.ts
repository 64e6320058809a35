import { createRequire } from 'node:module';
import type { Client, ConnectConfig } from 'ssh2';
import { fingerprintOf, HostKeyRejectedError } from './host-key.ts';

export interface ConnectionKey {
  sessionId: string;
  host: string;
  port: number;
  username: string;
}

export type SshConnectOptions = Omit<ConnectConfig, 'hostVerifier'> & {
  /** Decides from the server's `SHA256:` fingerprint whether to go on. */
  acceptsHostKey(fingerprint: string): boolean;
};

export interface SshLease {
  client: Client;
  /** True when this call found the connection already open (or opening) in the pool. */
  reused: boolean;
  /** True once the connection has closed or failed. */
  isClosed(): boolean;
  /** Ends this use; the connection stays pooled until it has been idle long enough. */
  release(): void;
  /** Drops a connection that turned out to be broken, so the next acquire opens a new one. */
  discard(): void;
}

interface PoolEntry {
  sessionId: string;
  client: Client;
  connecting: Promise<Client>;
  ready: boolean;
  leases: number;
  closed: boolean;
  idleTimer?: NodeJS.Timeout;
}

const twentyMinutes = 20 * 60 * 1000;
const closeGraceMs = 2000;

export function connectionKeyText(key: ConnectionKey): string {
  return `${key.sessionId}:${key.host}:${key.port}:${key.username}`;
}

/** Open SSH connections, one per session, host, port and user, shared by the calls of that session. */
export class SshPool {
  private readonly entries = new Map<string, PoolEntry>();
  private readonly idleMs: number;

  constructor(options: { idleMs?: number } = {}) {
    this.idleMs = options.idleMs ?? twentyMinutes;
  }

  get size(): number {
    return this.entries.size;
  }

  async acquire(key: ConnectionKey, connectOptions: SshConnectOptions): Promise<SshLease> {
    const id = connectionKeyText(key);
    const existing = this.entries.get(id);
    const entry = existing ?? this.open(id, key.sessionId, connectOptions);
    entry.leases += 1;
    clearTimeout(entry.idleTimer);
    let client: Client;
    try {
      client = await entry.connecting;
    } catch (error) {
      entry.leases -= 1;
      throw error;
    }
    let released = false;
    return {
      client,
      reused: existing !== undefined,
      isClosed: () => entry.closed,
      release: () => {
        if (released) return;
        released = true;
        this.release(id, entry);
      },
      discard: () => this.remove(id, entry),
    };
  }

  async releaseSession(sessionId: string): Promise<void> {
    const closing = [...this.entries].filter(([, entry]) => entry.sessionId === sessionId).map(([id, entry]) => this.remove(id, entry));
    await Promise.all(closing);
  }

  async closeAll(): Promise<void> {
    await Promise.all([...this.entries].map(([id, entry]) => this.remove(id, entry)));
  }

  private open(id: string, sessionId: string, connectOptions: SshConnectOptions): PoolEntry {
    const forget = () => {
      entry.closed = true;
      clearTimeout(entry.idleTimer);
      if (this.entries.get(id) === entry) this.entries.delete(id);
    };
    const { client, connecting } = connect(connectOptions, forget);
    const entry: PoolEntry = { sessionId, client, connecting, ready: false, leases: 0, closed: false };
    connecting.then(() => {
      entry.ready = true;
    }, forget);
    this.entries.set(id, entry);
    return entry;
  }

  private release(id: string, entry: PoolEntry): void {
    entry.leases -= 1;
    if (entry.leases > 0 || entry.closed) return;
    entry.idleTimer = setTimeout(() => void this.remove(id, entry), this.idleMs).unref();
  }

  private async remove(id: string, entry: PoolEntry): Promise<void> {
    if (this.entries.get(id) === entry) this.entries.delete(id);
    clearTimeout(entry.idleTimer);
    if (entry.closed) return;
    entry.closed = true;
    if (entry.ready) await endClient(entry.client);
    else entry.client.destroy();
  }
}

const require = createRequire(import.meta.url);
/** ssh2 is CommonJS: required, synchronously, at the first connection rather than with the server. */
let ssh2: typeof import('ssh2') | undefined;

/** Opens one authenticated connection; `onClosed` fires when it later drops. */
function connect(options: SshConnectOptions, onClosed: () => void): { client: Client; connecting: Promise<Client> } {
  const { acceptsHostKey, ...connectConfig } = options;
  ssh2 ??= require('ssh2') as typeof import('ssh2');
  const client = new ssh2.Client();
  const connecting = new Promise<Client>((resolve, reject) => {
    let ready = false;
    let rejectedFingerprint: string | undefined;
    client.on('error', (error) => {
      if (ready) return;
      reject(rejectedFingerprint === undefined ? error : new HostKeyRejectedError(rejectedFingerprint));
    });
    client.once('ready', () => {
      ready = true;
      resolve(client);
    });
    client.once('close', () => {
      if (ready) onClosed();
      else reject(new Error('The server closed the connection before it was ready.'));
    });
    try {
      client.connect({
        ...connectConfig,
        // Nothing local travels to the remote host: no agent (so no agent forwarding) and, in
        // runCommand, no environment variables. Set here so no caller's options can turn them on.
        agent: undefined,
        agentForward: false,
        hostVerifier: (publicKey: Buffer) => {
          const fingerprint = fingerprintOf(publicKey);
          if (acceptsHostKey(fingerprint)) return true;
          rejectedFingerprint = fingerprint;
          return false;
        },
      });
      // Commands are small exchanges: without this, Nagle's algorithm and delayed ACKs stall about half the calls by ~40 ms.
      client.setNoDelay(true);
    } catch (error) {
      reject(error);
    }
  });
  return { client, connecting };
}

function endClient(client: Client): Promise<void> {
  return new Promise((resolve) => {
    const fallback = setTimeout(() => {
      client.destroy();
      resolve();
    }, closeGraceMs).unref();
    client.once('close', () => {
      clearTimeout(fallback);
      resolve();
    });
    client.end();
  });
}
