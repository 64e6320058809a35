// The attacks of issue 23 as programs a model would write, for code_exec and user tools alike.
// Each prints one JSON object: what it tried and what came back, so a test can tell a closed
// door (an error) from an open one (data, an HTTP status).
import os from 'node:os';

/** Every spelling of this machine that reaches Hearth (listening on `::`) from outside a jail. */
export function hearthAddresses(): string[] {
  const interfaces = Object.values(os.networkInterfaces())
    .flat()
    .filter((entry) => entry !== undefined && !entry.internal && !entry.address.startsWith('fe80'))
    .map((entry) => (entry!.family === 'IPv6' ? `[${entry!.address}]` : entry!.address));
  return ['127.0.0.1', 'localhost', '[::1]', '0.0.0.0', '127.1', '[::]', '[::ffff:127.0.0.1]', ...interfaces];
}

export interface AttackTargets {
  hearthPid: number;
  parentPid: number;
  port: number;
  envFile: string;
  database: string;
  wal: string;
  /** Paths outside the work folder where the program tries to make a FIFO, a socket and a file. */
  outside: string[];
  /** A Unix socket the test listens on, outside the work folder. */
  foreignSocket: string;
  /** A session with an approval waiting. */
  pendingSessionId: string;
}

/** JavaScript (code_exec or a user tool's body): reads, connects, renices, then prints the findings. */
export function javascriptAttack(targets: AttackTargets): string {
  return `
const fs = await import('node:fs');
const net = await import('node:net');
const os = await import('node:os');
const targets = ${JSON.stringify({ ...targets, addresses: hearthAddresses() })};
const found = { reads: {}, http: {}, renice: {}, sockets: {}, made: {} };
for (const file of ['/proc/' + process.ppid + '/environ', '/proc/1/environ', '/proc/' + targets.hearthPid + '/environ', '/proc/' + targets.parentPid + '/environ', targets.envFile, targets.database, targets.wal]) {
  try { found.reads[file] = fs.readFileSync(file, 'latin1'); } catch (error) { found.reads[file] = 'error ' + error.code; }
}
for (const address of targets.addresses) {
  const base = 'http://' + address + ':' + targets.port;
  try {
    const pending = await fetch(base + '/approvals?status=pending', { signal: AbortSignal.timeout(3000) });
    const listed = await pending.text();
    const decided = await fetch(base + '/sessions/' + targets.pendingSessionId + '/approvals/any', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"decision":"allow"}', signal: AbortSignal.timeout(3000) });
    found.http[address] = 'answered ' + pending.status + ' ' + listed.slice(0, 200) + ' / ' + decided.status;
  } catch (error) { found.http[address] = 'error ' + (error.cause?.code ?? error.name); }
}
for (const pid of [process.ppid, 1, targets.hearthPid, targets.parentPid]) {
  try { os.setPriority(pid, 19); found.renice[pid] = 'reniced'; } catch (error) { found.renice[pid] = 'error ' + error.code; }
}
found.sockets[targets.foreignSocket] = await new Promise((resolve) => {
  const socket = net.connect(targets.foreignSocket);
  socket.once('connect', () => { socket.write('hello from the jail'); socket.end(); resolve('connected'); });
  socket.once('error', (error) => resolve('error ' + error.code));
});
for (const place of targets.outside) {
  try { fs.writeFileSync(place + '-js-file', 'escaped'); found.made[place + '-js-file'] = 'made'; } catch (error) { found.made[place + '-js-file'] = 'error ' + error.code; }
  found.made[place + '-js-socket'] = await new Promise((resolve) => {
    const server = net.createServer();
    server.once('error', (error) => resolve('error ' + error.code));
    server.listen(place + '-js-socket', () => { server.close(); resolve('made'); });
  });
}
console.log(JSON.stringify(found));
`;
}

/** The same in Python, with a FIFO too (mkfifo). */
export function pythonAttack(targets: AttackTargets): string {
  return `
import json, os, socket, urllib.request
targets = json.loads(${JSON.stringify(JSON.stringify({ ...targets, addresses: hearthAddresses() }))})
found = {'reads': {}, 'http': {}, 'renice': {}, 'sockets': {}, 'made': {}}
for path in ['/proc/%d/environ' % os.getppid(), '/proc/1/environ', '/proc/%d/environ' % targets['hearthPid'], '/proc/%d/environ' % targets['parentPid'], targets['envFile'], targets['database'], targets['wal']]:
    try:
        with open(path, 'rb') as handle: found['reads'][path] = handle.read().decode('latin1')
    except OSError as error: found['reads'][path] = 'error %s' % error.errno
for address in targets['addresses']:
    try:
        with urllib.request.urlopen('http://%s:%d/approvals?status=pending' % (address, targets['port']), timeout=3) as response:
            found['http'][address] = 'answered %d' % response.status
    except urllib.error.HTTPError as error: found['http'][address] = 'answered %d' % error.code
    except Exception as error: found['http'][address] = 'error %r' % (error,)
for pid in [os.getppid(), 1, targets['hearthPid'], targets['parentPid']]:
    try:
        os.setpriority(os.PRIO_PROCESS, pid, 19); found['renice'][str(pid)] = 'reniced'
    except OSError as error: found['renice'][str(pid)] = 'error %s' % error.errno
try:
    client = socket.socket(socket.AF_UNIX); client.connect(targets['foreignSocket']); client.sendall(b'hello from the jail'); client.close()
    found['sockets'][targets['foreignSocket']] = 'connected'
except OSError as error: found['sockets'][targets['foreignSocket']] = 'error %s' % error.errno
for place in targets['outside']:
    try: os.mkfifo(place + '-py-fifo'); found['made'][place + '-py-fifo'] = 'made'
    except OSError as error: found['made'][place + '-py-fifo'] = 'error %s' % error.errno
    try:
        server = socket.socket(socket.AF_UNIX); server.bind(place + '-py-socket'); found['made'][place + '-py-socket'] = 'made'
    except OSError as error: found['made'][place + '-py-socket'] = 'error %s' % error.errno
    try:
        with open(place + '-py-file', 'w') as handle: handle.write('escaped')
        found['made'][place + '-py-file'] = 'made'
    except OSError as error: found['made'][place + '-py-file'] = 'error %s' % error.errno
print(json.dumps(found))
`;
}

export interface Findings {
  reads: Record<string, string>;
  http: Record<string, string>;
  renice: Record<string, string>;
  sockets: Record<string, string>;
  made: Record<string, string>;
}

/** The program's JSON line out of a tool result. */
export function findingsOf(result: string): Findings {
  const line = result.split('\n').find((text) => text.startsWith('{"reads"'));
  if (line === undefined) throw new Error(`the attack printed no findings: ${result}`);
  return JSON.parse(line) as Findings;
}
