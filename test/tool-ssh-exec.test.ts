import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { EventEmitter, once } from 'node:events';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import ssh2, { type Connection, type ParsedKey, type Server, type Session } from 'ssh2';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { parseConfig } from '../src/config.ts';
import { fingerprintOf } from '../src/tools/builtin/ssh/host-key.ts';
import { parseSshHosts } from '../src/tools/builtin/ssh/ssh-hosts-file.ts';
import { SshPool } from '../src/tools/builtin/ssh/ssh-pool.ts';
import { createSshExecTool } from '../src/tools/builtin/ssh-exec.ts';
import type { Tool, ToolContext } from '../src/tools/tool.ts';
import { runTool } from './support/tool-context.ts';

const { utils } = ssh2;
const username = 'tester';
const password = 'secret';

/** A real SSH server on loopback that runs each exec request with `sh -c`. */
class TestSshServer {
  readonly events = new EventEmitter();
  readonly connections: Connection[] = [];
  readonly hostKey = utils.generateKeyPairSync('ed25519');
  readonly clientKey = utils.generateKeyPairSync('ed25519');
  private readonly server: Server;
  port = 0;
  /** Makes the server hang up on the next session request, as a connection that died unnoticed would. */
  dropNextSession = false;

  constructor() {
    const allowedKey = utils.parseKey(this.clientKey.public) as ParsedKey;
    this.server = new ssh2.Server({ hostKeys: [this.hostKey.private] }, (connection) => {
      this.connections.push(connection);
      connection.on('error', () => {});
      connection.on('authentication', (context) => {
        if (context.method === 'password' && context.username === username && context.password === password) return context.accept();
        if (context.method === 'publickey' && context.username === username && context.key.data.equals(allowedKey.getPublicSSH())) {
          if (!context.signature || allowedKey.verify(context.blob!, context.signature, context.hashAlgo) === true) return context.accept();
        }
        context.reject(['password', 'publickey']);
      });
      connection.on('ready', () =>
        connection.on('session', (acceptSession) => {
          if (!this.dropNextSession) return this.serveSession(acceptSession());
          this.dropNextSession = false;
          connection.end();
        }),
      );
    });
  }

  private serveSession(session: Session): void {
    let child: ChildProcess | undefined;
    session.on('signal', (_accept, _reject, info) => child?.kill(`SIG${info.name}` as NodeJS.Signals));
    session.on('exec', (acceptExec, _reject, info) => {
      const channel = acceptExec();
      const running = spawn('sh', ['-c', info.command], { stdio: ['pipe', 'pipe', 'pipe'] });
      child = running;
      running.stdin.on('error', () => {});
      // Not pipe(): it stops reading once the child's stdin closes, and a channel never read to its end never emits close.
      channel.on('data', (chunk: Buffer) => running.stdin.write(chunk));
      channel.on('end', () => running.stdin.end());
      running.stdout.pipe(channel, { end: false });
      running.stderr.pipe(channel.stderr, { end: false });
      running.on('close', (code, signalName) => {
        if (signalName) channel.exit(signalName.replace(/^SIG/, ''), false, '');
        else channel.exit(code ?? 0);
        channel.end();
      });
      channel.on('close', () => {
        running.kill('SIGKILL');
        this.events.emit('channel-closed', info.command);
      });
      this.events.emit('exec', info.command);
    });
  }

  async listen(): Promise<void> {
    this.server.listen(0, '127.0.0.1');
    await once(this.server, 'listening');
    this.port = (this.server.address() as { port: number }).port;
  }

  async close(): Promise<void> {
    for (const connection of this.connections) connection.end();
    await new Promise((resolve) => this.server.close(resolve));
  }
}

let server: TestSshServer;
let directory: string;
let hostsFilePath: string;
let tool: Tool;
let hostFingerprint: string;

function run(args: Record<string, unknown>, overrides?: Partial<ToolContext>) {
  return runTool(tool, args, { sessionId: 'session-a', ...overrides });
}

async function writeHosts(hosts: unknown): Promise<void> {
  await fs.writeFile(hostsFilePath, typeof hosts === 'string' ? hosts : JSON.stringify(hosts, null, 2));
}

function localEntry(overrides: Record<string, unknown> = {}) {
  return { host: '127.0.0.1', port: server.port, username, password, host_key: hostFingerprint, ...overrides };
}

function waitForExec(command: string): Promise<void> {
  return new Promise((resolve) => {
    const listener = (started: string) => {
      if (started !== command) return;
      server.events.off('exec', listener);
      resolve();
    };
    server.events.on('exec', listener);
  });
}

beforeAll(async () => {
  server = new TestSshServer();
  await server.listen();
  directory = await fs.mkdtemp(path.join(os.tmpdir(), 'hearth-ssh-'));
  const publicKeyPath = path.join(directory, 'host_key.pub');
  await fs.writeFile(publicKeyPath, `${server.hostKey.public}\n`);
  const keygen = spawnSync('ssh-keygen', ['-lf', publicKeyPath], { encoding: 'utf8' });
  hostFingerprint = keygen.status === 0 ? keygen.stdout.split(' ')[1]! : fingerprintOf((utils.parseKey(server.hostKey.public) as ParsedKey).getPublicSSH());
});

afterAll(async () => {
  await server.close();
  await fs.rm(directory, { recursive: true, force: true });
});

beforeEach(async () => {
  server.connections.length = 0;
  hostsFilePath = path.join(directory, 'ssh_hosts.json');
  await writeHosts({ local: localEntry(), unchecked: localEntry({ host: 'localhost', host_key: 'none' }) });
  tool = createSshExecTool({ config: parseConfig({ SSH_HOSTS_FILE: hostsFilePath }) });
});

afterEach(async () => {
  await tool.dispose?.();
});

describe('ssh_exec', () => {
  it('computes the host key fingerprint as OpenSSH does', () => {
    expect(fingerprintOf((utils.parseKey(server.hostKey.public) as ParsedKey).getPublicSSH())).toBe(hostFingerprint);
  });

  it('runs a command on a named connection and returns stdout, stderr and the exit code', async () => {
    const success = await run({ connection: 'local', command: 'echo hello' });
    expect(success).toMatchObject({ success: true, output: 'Exit code 0.\nstdout:\nhello\n' });

    const failed = await run({ connection: 'local', command: 'echo out; echo err >&2; exit 3' });
    expect(failed.success).toBe(false);
    expect(failed.output).toBe('Exit code 3.\nstdout:\nout\n\nstderr:\nerr\n');
    expect(failed.metadata).toMatchObject({ exit_code: 3 });
  });

  it('closes the command’s input so a command that reads it does not hang', async () => {
    const result = await run({ connection: 'local', command: 'cat; echo done', timeout_s: 5 });
    expect(result).toMatchObject({ success: true, output: 'Exit code 0.\nstdout:\ndone\n' });
  });

  it('reuses the pooled connection across calls, and concurrent first calls share one connection', async () => {
    const results = await Promise.all([1, 2, 3].map((number) => run({ connection: 'local', command: `echo ${number}` })));
    expect(results.map((result) => result.success)).toEqual([true, true, true]);
    const again = await run({ connection: 'local', command: 'echo again' });
    expect(again.metadata).toMatchObject({ reused_connection: true });
    expect(server.connections).toHaveLength(1);
  });

  it('accepts an ad-hoc host whose host key is in the hosts file', async () => {
    const result = await run({ host: '127.0.0.1', port: server.port, username, password, command: 'echo ad-hoc' });
    expect(result).toMatchObject({ success: true });
    expect(result.output).toContain('ad-hoc');
  });

  it('refuses a host whose key does not match, showing the key the server presented', async () => {
    await writeHosts({ local: localEntry({ host_key: `SHA256:${'A'.repeat(43)}` }) });
    const result = await run({ connection: 'local', command: 'echo never' });
    expect(result.success).toBe(false);
    expect(result.output).toContain('Refused');
    expect(result.output).toContain(`"host_key": "${hostFingerprint}"`);
  });

  it('refuses an ad-hoc host without an entry in the hosts file, showing its key', async () => {
    await writeHosts({});
    const result = await run({ host: '127.0.0.1', port: server.port, username, password, command: 'echo never' });
    expect(result.success).toBe(false);
    expect(result.output).toContain('has no entry for 127.0.0.1');
    expect(result.output).toContain(hostFingerprint);
  });

  it('skips the host key check for "none"', async () => {
    const result = await run({ connection: 'unchecked', command: 'echo unchecked' });
    expect(result).toMatchObject({ success: true });
  });

  it('reports an authentication failure', async () => {
    const result = await run({ connection: 'local', password: 'wrong', command: 'echo never' });
    expect(result.success).toBe(false);
    expect(result.output).toMatch(/^Authentication failed for "local"/);
  });

  it('authenticates with a private key from key_path, expanding ~', async () => {
    const home = path.join(directory, 'home');
    await fs.mkdir(home, { recursive: true });
    await fs.writeFile(path.join(home, 'id_test'), server.clientKey.private, { mode: 0o600 });
    await writeHosts({ keyed: localEntry({ password: undefined, key_path: '~/id_test' }) });
    const previousHome = process.env.HOME;
    process.env.HOME = home;
    try {
      expect(await run({ connection: 'keyed', command: 'echo keyed' })).toMatchObject({ success: true });
    } finally {
      process.env.HOME = previousHome;
    }
  });

  it('reconnects once when the server dropped the pooled connection', async () => {
    expect((await run({ connection: 'local', command: 'echo first' })).success).toBe(true);
    server.connections[0]!.end();
    const second = await run({ connection: 'local', command: 'echo second' });
    expect(second).toMatchObject({ success: true, metadata: { reused_connection: false } });
    expect(second.output).toContain('second');
    expect(server.connections).toHaveLength(2);
  });

  it('reconnects once when the connection dies as the command is sent', async () => {
    expect((await run({ connection: 'local', command: 'echo first' })).success).toBe(true);
    server.dropNextSession = true;
    const second = await run({ connection: 'local', command: 'echo second' });
    expect(second).toMatchObject({ success: true, metadata: { reused_connection: false } });
    expect(server.connections).toHaveLength(2);
  });

  it('stops a running command quickly and keeps the connection usable', async () => {
    const controller = new AbortController();
    const started = waitForExec('echo begun; sleep 30');
    const closed = once(server.events, 'channel-closed');
    const running = run({ connection: 'local', command: 'echo begun; sleep 30' }, { signal: controller.signal });
    await started;
    const stoppedAt = performance.now();
    controller.abort();
    const result = await running;
    expect(performance.now() - stoppedAt).toBeLessThan(1000);
    expect(result.success).toBe(false);
    expect(result.output).toMatch(/^Stopped by the user after/);
    await closed;

    const next = await run({ connection: 'local', command: 'echo still here' });
    expect(next).toMatchObject({ success: true, metadata: { reused_connection: true } });
    expect(server.connections).toHaveLength(1);
  });

  it('times out a long command and returns its partial output', async () => {
    const result = await run({ connection: 'local', command: 'echo partial; sleep 30', timeout_s: 1 });
    expect(result.success).toBe(false);
    expect(result.output).toMatch(/^Timed out after 1 s/);
    expect(result.output).toContain('partial');
  });

  it('keeps the head and tail of long output', async () => {
    const result = await run({ connection: 'local', command: 'seq 1 100000' });
    expect(result.output.length).toBeLessThan(20_200);
    expect(result.output).toContain('characters omitted');
    expect(result.output).toContain('stdout:\n1\n2\n');
    expect(result.output.trimEnd().endsWith('100000')).toBe(true);
  });

  it('releaseSession closes only that session’s connections', async () => {
    await run({ connection: 'local', command: 'echo a' }, { sessionId: 'session-a' });
    await run({ connection: 'local', command: 'echo b' }, { sessionId: 'session-b' });
    expect(server.connections).toHaveLength(2);
    const closed = once(server.connections[0]!, 'close');
    await tool.releaseSession?.('session-a');
    await closed;

    const sessionB = await run({ connection: 'local', command: 'echo b' }, { sessionId: 'session-b' });
    expect(sessionB.metadata).toMatchObject({ reused_connection: true });
    const sessionA = await run({ connection: 'local', command: 'echo a' }, { sessionId: 'session-a' });
    expect(sessionA.metadata).toMatchObject({ reused_connection: false });
    expect(server.connections).toHaveLength(3);
  });

  it('closes a connection once it has been idle long enough', async () => {
    const pool = new SshPool({ idleMs: 50 });
    tool = createSshExecTool({ config: parseConfig({ SSH_HOSTS_FILE: hostsFilePath }), pool });
    await run({ connection: 'local', command: 'echo soon idle' });
    expect(pool.size).toBe(1);
    await once(server.connections[0]!, 'close');
    expect(pool.size).toBe(0);
  });

  it('reports an invalid hosts file and picks up the fixed file without a restart', async () => {
    await writeHosts({ local: { host: '127.0.0.1', host_key: 'none' } });
    const invalid = await run({ connection: 'local', command: 'echo never' });
    expect(invalid.success).toBe(false);
    expect(invalid.output).toContain(hostsFilePath);
    expect(invalid.output).toContain('missing "username"');

    await writeHosts('{ not json');
    expect((await run({ connection: 'local', command: 'echo never' })).output).toContain('is not valid JSON');

    await writeHosts({ fixed: localEntry() });
    expect(await run({ connection: 'fixed', command: 'echo fixed' })).toMatchObject({ success: true });
  });

  it('accepts the shipped example hosts file', async () => {
    const example = parseSshHosts(await fs.readFile('ssh_hosts.example.json', 'utf8'), 'ssh_hosts.example.json');
    expect(example).toMatchObject({ ok: true });
  });

  it('names the known connections when the requested one does not exist', async () => {
    const result = await run({ connection: 'missing', command: 'echo never' });
    expect(result.success).toBe(false);
    expect(result.output).toContain('Known connections: local, unchecked');
  });
});
