import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import mqtt from 'mqtt';
import { freeLoopbackPort } from './loopback-port.ts';

/** Debian's Mosquitto (`apt-get install -y mosquitto`); `.ci/run` installs it when missing. */
export const mosquittoPath = process.env.HEARTH_MOSQUITTO ?? '/usr/sbin/mosquitto';
const passwordTool = '/usr/bin/mosquitto_passwd';

export interface MosquittoOptions {
  /** A login the broker requires; anonymous clients are allowed without one. */
  login?: { username: string; password: string };
}

export interface Mosquitto {
  readonly port: number;
  readonly url: string;
  /** Ends the broker and waits for its process to exit; the port is free again after. */
  stop(): Promise<void>;
  /** Starts it again on the same port with the same configuration. */
  start(): Promise<void>;
  /** Stops it and removes its folder. */
  close(): Promise<void>;
}

/** A real Mosquitto on a free loopback port, persistence off, its config and password file in a temp folder. */
export async function startMosquitto(options: MosquittoOptions = {}): Promise<Mosquitto> {
  if (!existsSync(mosquittoPath)) throw new Error(`Mosquitto not found at ${mosquittoPath}; install it with "apt-get install -y mosquitto".`);
  const folder = await mkdtemp(path.join(tmpdir(), 'hearth-mosquitto-'));
  const port = await freeLoopbackPort();
  const configFile = path.join(folder, 'mosquitto.conf');
  const lines = [`listener ${port} 127.0.0.1`, 'persistence false', 'log_dest stderr', 'log_type error', 'log_type warning'];
  if (options.login) {
    const passwordFile = path.join(folder, 'passwords');
    const made = spawnSync(passwordTool, ['-b', '-c', passwordFile, options.login.username, options.login.password], { encoding: 'utf8' });
    if (made.status !== 0) throw new Error(`mosquitto_passwd failed: ${made.stderr}`);
    lines.push('allow_anonymous false', `password_file ${passwordFile}`);
  } else {
    lines.push('allow_anonymous true');
  }
  // Run as root, Mosquitto would switch to its own user, who cannot read the temp folder.
  if (process.getuid?.() === 0) lines.push('user root');
  await writeFile(configFile, `${lines.join('\n')}\n`);

  let child: ChildProcess | undefined;
  const url = `mqtt://127.0.0.1:${port}`;

  async function start(): Promise<void> {
    if (child) return;
    let output = '';
    const started = spawn(mosquittoPath, ['-c', configFile], { stdio: ['ignore', 'ignore', 'pipe'] });
    started.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const exited = new Promise<never>((_resolve, reject) => {
      started.once('exit', (code) => reject(new Error(`mosquitto exited (${code}) before accepting connections: ${output}`)));
    });
    exited.catch(() => {});
    child = started;
    try {
      await Promise.race([acceptsConnections(port, options.login), exited]);
    } catch (error) {
      await stop();
      throw error;
    }
  }

  async function stop(): Promise<void> {
    const running = child;
    child = undefined;
    if (!running || running.exitCode !== null || running.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => running.once('exit', () => resolve()));
    running.kill('SIGTERM');
    await exited;
  }

  await start();
  return {
    port,
    url,
    stop,
    start,
    async close() {
      await stop();
      await rm(folder, { recursive: true, force: true });
    },
  };
}

/** Resolves once an MQTT client gets a CONNACK from the broker on `port`; retries while the listener is not up yet. */
async function acceptsConnections(port: number, login: MosquittoOptions['login'], timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await listening(port))) {
    if (Date.now() > deadline) throw new Error(`mosquitto did not listen on ${port} within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  const client = await mqtt.connectAsync(`mqtt://127.0.0.1:${port}`, { ...login, reconnectPeriod: 0, connectTimeout: timeoutMs });
  await client.endAsync(true);
}

function listening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}
