// Scenario 6: the real ssh_exec tool running `true` on a loopback SSH server (its own child
// process), on the session's pooled connection and on a fresh connection per call.
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { parseConfig } from '../../src/config.ts';
import { SshPool, type ConnectionKey, type SshConnectOptions, type SshLease } from '../../src/tools/builtin/ssh/ssh-pool.ts';
import { createSshExecTool } from '../../src/tools/builtin/ssh-exec.ts';
import type { ToolResult } from '../../src/tools/tool.ts';
import type { ScenarioResult } from '../report.ts';
import { SshServerProcess } from '../ssh-server.ts';
import { median } from '../statistics.ts';
import { makeTemporaryDirectory, removeTemporaryDirectory } from '../temporary-directories.ts';
import { medianAndP95, spread, timedCall, toolContext } from './tool-calls.ts';

const pooledCalls = 200;
const freshCalls = 30;
const pooledBudgetMs = 10;
const connection = 'bench';
/** A call this slow on loopback waited for a delayed ACK (~40 ms on Linux), not for work. */
const stallMs = 30;

function stalls(samples: readonly number[]): string {
  return `${samples.filter((sample) => sample > stallMs).length} of ${samples.length} over ${stallMs} ms`;
}

/**
 * Diagnostic only, not what src/ does: the pool with TCP_NODELAY on each client socket, to show
 * what Nagle's algorithm costs the pooled calls (a write held back until the server's delayed ACK).
 */
class NoDelaySshPool extends SshPool {
  override async acquire(key: ConnectionKey, connectOptions: SshConnectOptions): Promise<SshLease> {
    const lease = await super.acquire(key, connectOptions);
    lease.client.setNoDelay(true);
    return lease;
  }
}

/** The tool says in its metadata whether the call found the connection already open. */
function expectReused(expected: boolean): (result: ToolResult) => string | undefined {
  return (result) => (result.metadata?.reused_connection === expected ? undefined : `expected reused_connection ${expected}, got ${String(result.metadata?.reused_connection)}`);
}

export async function sshExecRoundTrips(): Promise<ScenarioResult> {
  const directory = await makeTemporaryDirectory('hearth-bench-ssh-');
  const abort = new AbortController();
  let sshServer: SshServerProcess | undefined;
  let tool: ReturnType<typeof createSshExecTool> | undefined;
  let noDelayTool: ReturnType<typeof createSshExecTool> | undefined;
  try {
    sshServer = await SshServerProcess.start();
    const hostsFile = path.join(directory, 'ssh_hosts.json');
    const entry = { host: '127.0.0.1', port: sshServer.port, username: sshServer.username, password: sshServer.password, host_key: sshServer.hostKeyFingerprint };
    await writeFile(hostsFile, JSON.stringify({ [connection]: entry }, null, 2), { mode: 0o600 });
    const config = parseConfig({ SSH_HOSTS_FILE: hostsFile });
    tool = createSshExecTool({ config, pool: new SshPool() });
    const args = { command: 'true', connection };

    // Pooled: one session; the warm-up call opens its connection, the measured calls reuse it.
    const pooledSession = toolContext('bench-ssh-pooled', abort.signal);
    const warmUp = await timedCall(tool, args, pooledSession, expectReused(false));
    const pooled: number[] = [];
    for (let call = 0; call < pooledCalls; call++) pooled.push((await timedCall(tool, args, pooledSession, expectReused(true))).milliseconds);
    await tool.releaseSession!(pooledSession.sessionId);
    const afterPooled = await sshServer.stats();

    // Fresh: a new session id per call, so each call connects, authenticates and checks the host key.
    const fresh: number[] = [];
    for (let call = 0; call < freshCalls; call++) {
      const session = toolContext(`bench-ssh-fresh-${call}`, abort.signal);
      fresh.push((await timedCall(tool, args, session, expectReused(false))).milliseconds);
      await tool.releaseSession!(session.sessionId);
    }
    const afterFresh = await sshServer.stats();

    noDelayTool = createSshExecTool({ config, pool: new NoDelaySshPool() });
    const noDelaySession = toolContext('bench-ssh-nodelay', abort.signal);
    await timedCall(noDelayTool, args, noDelaySession, expectReused(false));
    const noDelay: number[] = [];
    for (let call = 0; call < pooledCalls; call++) noDelay.push((await timedCall(noDelayTool, args, noDelaySession, expectReused(true))).milliseconds);

    const pooledMedian = median(pooled);
    return {
      rows: [
        {
          scenario: '6a. `ssh_exec` `true`, pooled connection',
          measured: `${medianAndP95(pooled)}; ${pooledCalls} calls on one connection, ${stalls(pooled)}`,
          target: `median < ${pooledBudgetMs} ms`,
          passed: pooledMedian < pooledBudgetMs,
        },
        {
          scenario: '6b. `ssh_exec` `true`, fresh connection',
          measured: `${medianAndP95(fresh)}; ${freshCalls} calls, one new connection each, ${stalls(fresh)}`,
          target: 'report only',
          passed: undefined,
        },
      ],
      details: [
        `ssh_exec: the real tool (createSshExecTool with its own SshPool) called in the bench process with ` +
          `{command: "true", connection: "${connection}"}; the ssh2 server runs in its own child process ` +
          `(bench/loopback-ssh-server-process.ts) on 127.0.0.1 with a generated ed25519 host key and password auth, and ` +
          `runs each exec with \`sh -c\`; the temp SSH_HOSTS_FILE names it with its SHA256 host key fingerprint ` +
          `(${sshServer.hostKeyFingerprint}). A call is timed from execute() to its result. Pooled: 1 warm-up call ` +
          `(opens the connection, ${warmUp.milliseconds.toFixed(1)} ms, discarded), then ${pooledCalls} calls in the same ` +
          `session, ${spread(pooled)}, ${stalls(pooled)}; the server saw ${afterPooled.connections} connection(s) and ${afterPooled.execs} execs. ` +
          `Fresh: ${freshCalls} calls each with a new session id, so each includes TCP connect, key exchange, host key ` +
          `check and password auth (tool.releaseSession after each, not timed), ${spread(fresh)}; the server saw ` +
          `${afterFresh.connections - afterPooled.connections} new connections. ` +
          `Diagnostic, not in the table: the pooled measurement repeated with TCP_NODELAY set on the client socket (an ` +
          `SshPool subclass calling client.setNoDelay(true); src/ does not) gives ${medianAndP95(noDelay)}, ${spread(noDelay)}, ${stalls(noDelay)}.`,
      ],
    };
  } finally {
    abort.abort();
    await tool?.dispose?.().catch(() => undefined);
    await noDelayTool?.dispose?.().catch(() => undefined);
    await sshServer?.stop().catch(() => undefined);
    await removeTemporaryDirectory(directory);
  }
}
