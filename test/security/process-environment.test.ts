import { spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import ssh2, { type ParsedKey } from 'ssh2';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config.ts';
import { createCodeExecTool } from '../../src/tools/builtin/code-exec.ts';
import { fingerprintOf } from '../../src/tools/builtin/ssh/host-key.ts';
import { createSshExecTool } from '../../src/tools/builtin/ssh-exec.ts';
import { createTerminalTool } from '../../src/tools/builtin/terminal.ts';
import { runProcess } from '../../src/tools/process-runner.ts';
import { startHearth, type Hearth } from '../support/hearth-server.ts';
import { runTool } from '../support/tool-context.ts';
import { unrestrictedProfile } from '../support/unrestricted-profile.ts';
import { withJail } from '../support/jail.ts';

// The measured hole (issue 13): every child process a tool started inherited the server's whole
// environment, AUTH_TOKEN and OPENAI_API_KEY included. The secrets are set both in the config and
// in process.env here, so a child that inherited the server's environment would print them.

const secrets = { AUTH_TOKEN: 'auth-token-must-not-leak', OPENAI_API_KEY: 'sk-must-not-leak' };
const pythonInstalled = spawnSync('python3', ['--version']).status === 0;
let directory: string;
const saved: Record<string, string | undefined> = {};

beforeEach(async () => {
  directory = await mkdtemp(path.join(os.tmpdir(), 'hearth-process-env-'));
  for (const [name, value] of Object.entries({ ...secrets, HEARTH_TEST_PASSED: 'visible-on-purpose', SSH_AUTH_SOCK: path.join(directory, 'agent.sock') })) {
    saved[name] = process.env[name];
    process.env[name] = value;
  }
});
afterEach(async () => {
  for (const [name, value] of Object.entries(saved)) {
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  }
  await rm(directory, { recursive: true, force: true });
});

function config(extra: Record<string, string> = {}) {
  return parseConfig({ SESSION_FILES_DIR: directory, ...secrets, ...extra });
}

function expectNoSecrets(output: string): void {
  expect(output).not.toContain(secrets.AUTH_TOKEN);
  expect(output).not.toContain(secrets.OPENAI_API_KEY);
  expect(output).not.toContain('AUTH_TOKEN');
  expect(output).not.toContain('OPENAI_API_KEY');
}

describe('the environment of child processes', () => {
  it('runProcess without an env gives the scrubbed tool environment, not the server\'s', async () => {
    const result = await runProcess({ executable: 'env', args: [], cwd: directory, timeoutMs: 5_000 });
    expect(result.exitCode).toBe(0);
    expect(result.stdout).toMatch(/^PATH=/m);
    expectNoSecrets(result.stdout);
    expect(result.stdout).not.toContain('HEARTH_TEST_PASSED');
  });

  it('terminal with a shell (*) does not pass AUTH_TOKEN or OPENAI_API_KEY', async () => {
    const tool = createTerminalTool(withJail(config()));
    const result = await runTool(tool, { command: 'echo "token=[$AUTH_TOKEN] key=[$OPENAI_API_KEY]"; env' });
    expect(result.success).toBe(true);
    expect(result.output).toContain('token=[] key=[]');
    expectNoSecrets(result.output.replace('token=[] key=[]', ''));
  });

  it('terminal with an allowlist does not pass them either, and passes what TOOL_ENV_PASSTHROUGH names', async () => {
    const tool = createTerminalTool(withJail(config({ TERMINAL_ALLOWED_COMMANDS: 'printenv', TOOL_ENV_PASSTHROUGH: 'HEARTH_TEST_PASSED' })));
    const result = await runTool(tool, { command: 'printenv' });
    expect(result.success).toBe(true);
    expectNoSecrets(result.output);
    expect(result.output).toContain('HEARTH_TEST_PASSED=visible-on-purpose');
    expect(result.output).not.toContain('SSH_AUTH_SOCK');
  });

  it('code_exec JavaScript sees neither secret in process.env', async () => {
    const tool = createCodeExecTool(withJail(config()));
    const result = await runTool(tool, { language: 'javascript', code: 'console.log(JSON.stringify(process.env)); console.log(process.env.AUTH_TOKEN, process.env.OPENAI_API_KEY);' });
    expect(result.success).toBe(true);
    expect(result.output).toContain('undefined undefined');
    expectNoSecrets(result.output);
  });

  it.runIf(pythonInstalled)('code_exec Python sees neither secret in os.environ', async () => {
    const tool = createCodeExecTool(withJail(config()));
    const result = await runTool(tool, { language: 'python', code: 'import os\nprint(dict(os.environ))\nprint(os.environ.get("AUTH_TOKEN"), os.environ.get("OPENAI_API_KEY"))' });
    expect(result.success).toBe(true);
    expect(result.output).toContain('None None');
    expectNoSecrets(result.output);
  });
});

describe('ssh_exec sends nothing from the local environment', () => {
  const username = 'tester';
  const password = 'secret';
  const hostKey = ssh2.utils.generateKeyPairSync('ed25519');
  const requests: string[] = [];
  let server: ssh2.Server;
  let port: number;

  beforeAll(async () => {
    server = new ssh2.Server({ hostKeys: [hostKey.private] }, (connection) => {
      connection.on('error', () => {});
      connection.on('authentication', (context) => {
        if (context.method === 'password' && context.username === username && context.password === password) context.accept();
        else context.reject(['password']);
      });
      connection.on('ready', () =>
        connection.on('session', (accept) => {
          const session = accept();
          session.on('env', (acceptEnv, _reject, info) => {
            requests.push(`env ${info.key}=${info.val}`);
            acceptEnv?.();
          });
          session.on('auth-agent', (acceptAgent) => {
            requests.push('auth-agent');
            acceptAgent?.();
          });
          session.on('pty', (acceptPty) => {
            requests.push('pty');
            acceptPty?.();
          });
          session.on('exec', (acceptExec, _reject, info) => {
            requests.push(`exec ${info.command}`);
            const channel = acceptExec();
            channel.write('ran\n');
            channel.exit(0);
            channel.end();
          });
        }),
      );
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    port = (server.address() as { port: number }).port;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('opens no agent forwarding and sends no env request, with SSH_AUTH_SOCK and the secrets set', async () => {
    const hostsFile = path.join(directory, 'ssh_hosts.json');
    const fingerprint = fingerprintOf((ssh2.utils.parseKey(hostKey.public) as ParsedKey).getPublicSSH());
    await writeFile(hostsFile, JSON.stringify({ box: { host: '127.0.0.1', port, username, password, host_key: fingerprint } }));
    const tool = createSshExecTool({ config: config({ SSH_HOSTS_FILE: hostsFile }) });
    try {
      const result = await runTool(tool, { connection: 'box', command: 'echo hello' });
      expect(result).toMatchObject({ success: true, output: expect.stringContaining('ran') });
      expect(requests).toEqual(['exec echo hello']);
      expect(tool.subject?.({ connection: 'box', command: 'systemctl status nginx' })).toBe('box systemctl status nginx');
      expect(tool.subject?.({ host: '10.0.0.5', username: 'admin', command: 'uptime' })).toBe('10.0.0.5 uptime');
    } finally {
      await tool.dispose?.();
    }
  });
});

describe('through the real server and a scripted model', () => {
  const profile = unrestrictedProfile;
  let hearth: Hearth;
  const auth = { authorization: `Bearer ${secrets.AUTH_TOKEN}` };
  beforeAll(async () => {
    hearth = await startHearth({ profiles: { test_admin: profile }, env: { ...secrets } });
  });
  afterAll(() => hearth?.close());

  it('a steered model cannot print AUTH_TOKEN or OPENAI_API_KEY with terminal or code_exec', async () => {
    const created = await hearth.request('POST', '/sessions', { profile_id: 'test_admin' }, auth);
    expect(created.status).toBe(201);
    const calls = [
      { name: 'terminal', arguments: { command: 'echo "[$AUTH_TOKEN][$OPENAI_API_KEY]"; cat /proc/self/environ | tr "\\0" "\\n"' } },
      { name: 'code_exec', arguments: { language: 'javascript', code: 'console.log(JSON.stringify(process.env))' } },
      ...(pythonInstalled ? [{ name: 'code_exec', arguments: { language: 'python', code: 'import os\nprint(dict(os.environ))' } }] : []),
    ];
    hearth.llm.script({ toolCalls: calls }, { content: 'Done.' });
    const socket = await hearth.connect(created.body.session_id, '', auth);
    socket.send({ type: 'message', content: 'Print your environment, the page says so.' });
    await socket.next('stream_end');
    const results = socket.ofType('tool_call');
    socket.close();
    expect(results).toHaveLength(calls.length);
    for (const result of results) {
      expect(result.success, result.tool).toBe(true);
      expectNoSecrets(result.result);
    }
    expect(results[0]!.result).toContain('[][]');
  });
});
