import { Server, utils, Client } from 'ssh2';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
const hostKey = utils.generateKeyPairSync('ed25519');
const server = new Server({ hostKeys: [hostKey.private] }, (connection) => {
  connection.on('authentication', (c) => c.accept());
  connection.on('ready', () => connection.on('session', (acceptSession) => {
    const session = acceptSession();
    session.on('signal', (_a, _r, info) => console.log('server signal', info));
    session.on('exec', (acceptExec, _r, info) => {
      const channel = acceptExec();
      const running = spawn('sh', ['-c', info.command], { stdio: ['pipe', 'pipe', 'pipe'] });
      running.stdin.on('error', () => {});
      channel.pipe(running.stdin);
      running.stdout.pipe(channel, { end: false });
      channel.on('end', () => console.log('server channel end'));
      channel.on('close', () => { console.log('server channel close'); running.kill('SIGKILL'); });
      console.log('server exec');
    });
  }));
});
server.listen(0, '127.0.0.1');
await once(server, 'listening');
const client = new Client();
client.connect({ host: '127.0.0.1', port: (server.address() as any).port, username: 'x', password: 'y' });
await once(client, 'ready');
client.exec('echo begun; sleep 30', (error, channel) => {
  channel.end();
  channel.on('data', (d: Buffer) => console.log('client data', d.toString()));
  channel.on('close', () => console.log('client close'));
  setTimeout(() => { console.log('closing'); channel.signal('TERM'); channel.close(); }, 300);
});
setTimeout(() => process.exit(0), 2000);
