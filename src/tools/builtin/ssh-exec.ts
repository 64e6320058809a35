import { readFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Type, type Static } from '@sinclair/typebox';
import type { Config } from '../../config.ts';
import { createPathPolicy } from '../host-files/path-policy.ts';
import type { Tool, ToolOutput } from '../tool.ts';
import { HostKeyRejectedError, sameFingerprint } from './ssh/host-key.ts';
import { runCommand, renderStreams, type CommandResult } from './ssh/remote-command.ts';
import { createSshHostsFileReader, type SshHosts } from './ssh/ssh-hosts-file.ts';
import { SshPool, type ConnectionKey, type SshConnectOptions, type SshLease } from './ssh/ssh-pool.ts';
import { toolFailure } from '../../failure.ts';

const defaultTimeoutSeconds = 60;
const maximumTimeoutSeconds = 600;
const connectTimeoutMs = 20_000;
const keepaliveIntervalMs = 15_000;
const defaultPort = 22;

const parameters = Type.Object(
  {
    command: Type.String({ minLength: 1, description: 'Shell command' }),
    connection: Type.Optional(Type.String({ description: 'Name from the SSH hosts file' })),
    host: Type.Optional(Type.String()),
    port: Type.Optional(Type.Integer({ minimum: 1, maximum: 65535 })),
    username: Type.Optional(Type.String()),
    password: Type.Optional(Type.String()),
    key_path: Type.Optional(Type.String({ description: 'Private key file' })),
    timeout_s: Type.Optional(Type.Number({ minimum: 1, maximum: maximumTimeoutSeconds, description: `Default ${defaultTimeoutSeconds}` })),
  },
  { additionalProperties: false },
);

type SshExecArguments = Static<typeof parameters>;

interface Target {
  entryName?: string;
  host: string;
  port: number;
  username: string;
  password?: string;
  keyPath?: string;
  /** A `SHA256:` fingerprint, `"none"`, or undefined when no hosts-file entry vouches for the host. */
  trustedHostKey?: string;
}

type RunOutcome =
  | { kind: 'connect-failed'; error: Error }
  | { kind: 'aborted-connecting' }
  | (CommandResult & { reused: boolean; connectionClosed: boolean });

function expandHome(filePath: string): string {
  if (filePath === '~' || filePath.startsWith('~/')) return path.join(os.homedir(), filePath.slice(1));
  return path.resolve(filePath);
}

function describeTarget(target: Target): string {
  const address = `${target.username}@${target.host}:${target.port}`;
  return target.entryName === undefined ? address : `"${target.entryName}" (${address})`;
}

export function createSshExecTool(options: { config: Config; pool?: SshPool }): Tool<SshExecArguments> {
  const paths = createPathPolicy({ config: options.config });
  const pool = options.pool ?? new SshPool();
  const hostsFile = createSshHostsFileReader(options.config.SSH_HOSTS_FILE);
  const fileLabel = `SSH_HOSTS_FILE (${hostsFile.filePath})`;

  function resolveTarget(args: SshExecArguments, hosts: SshHosts, fileExists: boolean): Target | string {
    const names = Object.keys(hosts).join(', ') || 'none';
    if (args.connection !== undefined) {
      const entry = Object.hasOwn(hosts, args.connection) ? hosts[args.connection] : undefined;
      if (!entry) {
        return fileExists
          ? `There is no connection named "${args.connection}" in ${fileLabel}. Known connections: ${names}.`
          : `There is no connection named "${args.connection}": ${fileLabel} does not exist. The user can create it (see tool_manual ssh_exec).`;
      }
      const port = entry.port ?? defaultPort;
      if ((args.host ?? entry.host) !== entry.host || (args.port ?? port) !== port || (args.username ?? entry.username) !== entry.username) {
        return `Connection "${args.connection}" is ${entry.username}@${entry.host}:${port}; drop host, port and username, or drop connection.`;
      }
      return {
        entryName: args.connection,
        host: entry.host,
        port,
        username: entry.username,
        password: args.password ?? entry.password,
        keyPath: args.key_path ?? entry.key_path,
        trustedHostKey: entry.host_key,
      };
    }
    if (!args.host || !args.username) return `Give connection (known: ${names}), or host and username.`;
    const port = args.port ?? defaultPort;
    const host = args.host.toLowerCase();
    const match = Object.entries(hosts).find(([, entry]) => entry.host.toLowerCase() === host && (entry.port ?? defaultPort) === port);
    return {
      entryName: match?.[0],
      host: args.host,
      port,
      username: args.username,
      password: args.password,
      keyPath: args.key_path,
      trustedHostKey: match?.[1].host_key,
    };
  }

  async function connectOptionsFor(target: Target, timeoutMs: number): Promise<SshConnectOptions | string> {
    let privateKey: Buffer | undefined;
    if (target.keyPath !== undefined) {
      try {
        privateKey = await readFile(expandHome(target.keyPath));
      } catch (error) {
        return `Cannot read the private key ${target.keyPath}: ${(error as Error).message}. Check key_path.`;
      }
    }
    const trusted = target.trustedHostKey;
    return {
      host: target.host,
      port: target.port,
      username: target.username,
      ...(target.password !== undefined && { password: target.password }),
      ...(privateKey && { privateKey }),
      readyTimeout: Math.min(connectTimeoutMs, timeoutMs),
      keepaliveInterval: keepaliveIntervalMs,
      acceptsHostKey: (fingerprint) => trusted === 'none' || (trusted !== undefined && sameFingerprint(trusted, fingerprint)),
    };
  }

  /** Resolves undefined on abort; a connection that opens later is handed back to the pool. */
  function acquireUnlessAborted(key: ConnectionKey, connectOptions: SshConnectOptions, signal: AbortSignal): Promise<SshLease | undefined> {
    if (signal.aborted) return Promise.resolve(undefined);
    const acquiring = pool.acquire(key, connectOptions);
    return new Promise((resolve, reject) => {
      const abandon = () => {
        resolve(undefined);
        acquiring.then((lease) => lease.release(), () => {});
      };
      signal.addEventListener('abort', abandon, { once: true });
      acquiring.then(
        (lease) => {
          signal.removeEventListener('abort', abandon);
          resolve(lease);
        },
        (error: unknown) => {
          signal.removeEventListener('abort', abandon);
          reject(error);
        },
      );
    });
  }

  /** Runs the command on a pooled connection, reconnecting once when the pooled one turns out to be gone. */
  async function runOnPool(key: ConnectionKey, connectOptions: SshConnectOptions, command: string, signal: AbortSignal, retryIfDropped = true): Promise<RunOutcome> {
    let lease: SshLease | undefined;
    try {
      lease = await acquireUnlessAborted(key, connectOptions, signal);
    } catch (error) {
      return { kind: 'connect-failed', error: error as Error };
    }
    if (!lease) return { kind: 'aborted-connecting' };
    const result = await runCommand(lease.client, command, signal);
    lease.release();
    const connectionClosed = lease.isClosed();
    if (result.kind === 'not-started' && retryIfDropped && (connectionClosed || isDisconnection(result.error))) {
      lease.discard();
      return runOnPool(key, connectOptions, command, signal, false);
    }
    return { ...result, reused: lease.reused, connectionClosed };
  }

  function describeConnectFailure(error: Error, target: Target, timeoutSeconds: number): string {
    const where = describeTarget(target);
    if (error instanceof HostKeyRejectedError) {
      const keyscan = `ssh-keyscan -p ${target.port} ${target.host} | ssh-keygen -lf -`;
      if (target.trustedHostKey === undefined) {
        return `Refused to connect to ${where}: ${fileLabel} has no entry for ${target.host}:${target.port}, so its host key cannot be checked. The server presented ${error.fingerprint}. If the user confirms that is their server's key (${keyscan}), add an entry with "host_key": "${error.fingerprint}" and use it as connection.`;
      }
      return `Refused to connect to ${where}: the server presented host key ${error.fingerprint}, but ${fileLabel} expects ${target.trustedHostKey}. The server may have been reinstalled, or the connection is being intercepted. Only if the user confirms the new key (${keyscan}), set "host_key": "${error.fingerprint}" in entry "${target.entryName}".`;
    }
    const level = (error as Error & { level?: string }).level;
    const code = (error as NodeJS.ErrnoException).code;
    if (level === 'client-authentication') {
      return `Authentication failed for ${where}: the server rejected the credentials. Check the username and the password or key_path.`;
    }
    if (level === 'client-timeout' || code === 'ETIMEDOUT') {
      return `Timed out connecting to ${where} after ${Math.min(connectTimeoutMs / 1000, timeoutSeconds)} s. Check that the host is up and reachable and that SSH listens on port ${target.port}.`;
    }
    if (code === 'ECONNREFUSED') return `Connection refused by ${target.host}:${target.port}. Check the host and port, and that the SSH server is running.`;
    if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') return `Cannot resolve the host name "${target.host}". Check the host.`;
    if (code === 'EHOSTUNREACH' || code === 'ENETUNREACH') return `${target.host} is unreachable from this server. Check the address and the network.`;
    return `SSH connection to ${where} failed: ${error.message}`;
  }

  function formatOutcome(outcome: RunOutcome, target: Target, timeoutSeconds: number, timedOut: boolean, startedAt: number): ToolOutput {
    const where = describeTarget(target);
    const interrupted = timedOut
      ? `Timed out after ${timeoutSeconds} s`
      : `Stopped by the user after ${((performance.now() - startedAt) / 1000).toFixed(1)} s`;
    switch (outcome.kind) {
      case 'connect-failed':
        return toolFailure(describeConnectFailure(outcome.error, target, timeoutSeconds));
      case 'aborted-connecting':
        return toolFailure(`${interrupted} while connecting to ${where}; the command did not run.`);
      case 'not-started':
        return toolFailure(
          outcome.connectionClosed
            ? `The connection to ${where} dropped before the command started, and reconnecting did not help: ${outcome.error.message}`
            : `Could not start the command on ${where}: ${outcome.error.message}`,
        );
      case 'finished': {
        const { ending, exitCode, exitSignal } = outcome;
        const summary = {
          exited: exitSignal !== undefined ? `Killed by signal ${exitSignal}.` : `Exit code ${exitCode}.`,
          aborted: `${interrupted}; the command was interrupted and its channel closed.${timedOut ? ` Raise timeout_s (max ${maximumTimeoutSeconds}) or run it in the background.` : ''} Partial output:`,
          closed: outcome.connectionClosed
            ? `The connection to ${where} was lost before the command finished. Partial output:`
            : 'The command ended without reporting an exit status.',
        }[ending];
        return {
          output: [summary, renderStreams(outcome.stdout, outcome.stderr)].join('\n'),
          success: ending === 'exited' && exitCode === 0,
          metadata: { exit_code: exitCode ?? null, signal: exitSignal ?? null, reused_connection: outcome.reused },
        };
      }
    }
  }

  return {
    name: 'ssh_exec',
    description: 'Run a shell command on a remote host over SSH (a named connection, or host and username).',
    parameters,
    subject: (args) => `${args.connection ?? args.host ?? ''} ${args.command}`.trim(),
    commandSubject: true,
    timeoutMs: (maximumTimeoutSeconds + 10) * 1000,
    // A key file the model names is a host file it makes Hearth read: Hearth's own are never read.
    async precheck(args, context) {
      if (args.key_path === undefined) return undefined;
      const decided = await paths.decide(args.key_path, 'read', context);
      return decided.ok ? undefined : `key_path: ${decided.message}`;
    },
    async execute(args, context) {
      const startedAt = performance.now();
      const loaded = await hostsFile.load();
      if (!loaded.ok) return toolFailure(loaded.message);
      const resolved = resolveTarget(args, loaded.hosts, loaded.exists);
      if (typeof resolved === 'string') return toolFailure(resolved);
      let target = resolved;
      if (args.key_path !== undefined) {
        // The file decided on is the one read, whatever folder a relative key_path meant.
        const decided = await paths.decide(args.key_path, 'read', context);
        if (!decided.ok) return toolFailure(`key_path: ${decided.message}`);
        target = { ...resolved, keyPath: decided.real };
      }
      const timeoutSeconds = args.timeout_s ?? defaultTimeoutSeconds;
      const connectOptions = await connectOptionsFor(target, timeoutSeconds * 1000);
      if (typeof connectOptions === 'string') return toolFailure(connectOptions);
      const timeout = AbortSignal.timeout(timeoutSeconds * 1000);
      const signal = AbortSignal.any([context.signal, timeout]);
      const key = { sessionId: context.sessionId, host: target.host, port: target.port, username: target.username };
      const outcome = await runOnPool(key, connectOptions, args.command, signal);
      return formatOutcome(outcome, target, timeoutSeconds, timeout.aborted && !context.signal.aborted, startedAt);
    },
    releaseSession: (sessionId) => pool.releaseSession(sessionId),
    dispose: () => pool.closeAll(),
  };
}

function isDisconnection(error: Error): boolean {
  return error.message === 'Not connected' || error.message === 'No response from server';
}
