// Child process: a real ssh2 SSH server on 127.0.0.1, on its own event loop, so the bench's
// measuring loop does not also serve the SSH side. It generates its own ed25519 host key,
// accepts one username and password (given by the parent in the environment) and runs each
// exec request with `sh -c`, as test/tool-ssh-exec.test.ts does, with TCP_NODELAY on. It reports its port and
// public host key over IPC, answers `stats` requests, and exits when the parent disconnects.
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import ssh2, { type Connection, type Session } from 'ssh2';
import type { SshServerCommand, SshServerReport } from './ssh-server-protocol.ts';

const username = process.env.BENCH_SSH_USERNAME ?? '';
const password = process.env.BENCH_SSH_PASSWORD ?? '';
if (username === '' || password === '') throw new Error('BENCH_SSH_USERNAME and BENCH_SSH_PASSWORD must be set');

function report(message: SshServerReport): void {
  process.send?.(message);
}

const hostKey = ssh2.utils.generateKeyPairSync('ed25519');
const connections = new Set<Connection>();
const commands = new Set<ChildProcess>();
let connectionCount = 0;
let execCount = 0;

function serveSession(session: Session): void {
  let child: ChildProcess | undefined;
  session.on('signal', (_accept, _reject, info) => child?.kill(`SIG${info.name}` as NodeJS.Signals));
  session.on('exec', (acceptExec, _reject, info) => {
    execCount += 1;
    const channel = acceptExec();
    const running = spawn('sh', ['-c', info.command], { stdio: ['pipe', 'pipe', 'pipe'] });
    child = running;
    commands.add(running);
    running.stdin.on('error', () => {});
    // Not pipe(): it stops reading once the child's stdin closes, and a channel never read to its end never emits close.
    channel.on('data', (chunk: Buffer) => running.stdin.write(chunk));
    channel.on('end', () => running.stdin.end());
    running.stdout.pipe(channel, { end: false });
    running.stderr.pipe(channel.stderr, { end: false });
    running.on('close', (code, signalName) => {
      commands.delete(running);
      if (signalName) channel.exit(signalName.replace(/^SIG/, ''), false, '');
      else channel.exit(code ?? 0);
      channel.end();
    });
    channel.on('close', () => running.kill('SIGKILL'));
  });
}

const server = new ssh2.Server({ hostKeys: [hostKey.private] }, (connection) => {
  // ssh2 writes exit-status, EOF and CLOSE as separate segments; with Nagle on, the later ones wait
  // for the client's delayed ACK (~40 ms on Linux), a stall of this stand-in, not of the tool.
  // sshd sets TCP_NODELAY on its sessions, so this server does too.
  // (server.js has Connection#setNoDelay; @types/ssh2 lacks it.)
  (connection as Connection & { setNoDelay(noDelay: boolean): unknown }).setNoDelay(true);
  connectionCount += 1;
  connections.add(connection);
  connection.on('close', () => connections.delete(connection));
  connection.on('error', () => {});
  connection.on('authentication', (context) => {
    if (context.method === 'password' && context.username === username && context.password === password) return context.accept();
    context.reject(['password']);
  });
  connection.on('ready', () => connection.on('session', (acceptSession) => serveSession(acceptSession())));
});

server.listen(0, '127.0.0.1');
await once(server, 'listening');
const { port } = server.address() as { port: number };

process.on('message', (command: SshServerCommand) => {
  if (command.type === 'stats') {
    report({ id: command.id, type: 'stats', connections: connectionCount, open: connections.size, execs: execCount });
  }
});

// The parent is gone (or asked us to go): never outlive it, nor leave a command running.
process.on('disconnect', () => {
  for (const command of commands) command.kill('SIGKILL');
  for (const connection of connections) connection.end();
  const exit = () => process.exit(0);
  server.close(exit);
  setTimeout(exit, 1_000).unref();
});

report({ type: 'ready', port, publicKey: hostKey.public });
