// The real Hearth server as a child process, started as `npm start` starts it, so the
// child's pid is the server's own node process (no wrapper) and its RSS is the server's.
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import path from 'node:path';
import { loadConfig } from '../src/config.ts';
import { track } from './child-processes.ts';
import { epochNow, sleep } from './epoch-time.ts';
import type { Endpoint } from './hearth-client.ts';
import { projectRoot } from './project-root.ts';

/**
 * Scenario 2's seeded context (2,000 messages, ~200,000 tokens) must reach the LLM whole, as
 * it measures a long context: at the default window it would be compressed and cut to fit.
 */
export const benchContextWindow = 524_288;

export interface ServerOptions {
  dataDir: string;
  databaseFile: string;
  llmUrl: string;
  /** Extra node flags, e.g. --cpu-prof. */
  nodeFlags?: string[];
  /** Extra environment, applied last (e.g. a temp TOOLS_DIR). */
  environment?: Record<string, string>;
  /**
   * `npm`: `npm start` itself, as people type it, in a process group of its own that stop() ends
   * whole; the child is then npm, not the server, so its pid is for timing only.
   */
  launcher?: 'node' | 'npm';
}

export interface StartedServer {
  server: ServerProcess;
  /** From spawn to the first 200 from GET /health. */
  startMs: number;
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const address = probe.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      probe.close(() => resolve(port));
    });
  });
}

export class ServerProcess implements Endpoint {
  private output = '';

  private constructor(
    private readonly child: ChildProcess,
    readonly baseUrl: string,
    readonly headers: Record<string, string>,
    private readonly launcher: 'node' | 'npm' = 'node',
  ) {
    const keep = (data: Buffer) => {
      this.output = (this.output + data.toString()).slice(-20_000);
    };
    child.stdout?.on('data', keep);
    child.stderr?.on('data', keep);
  }

  static async start(options: ServerOptions): Promise<StartedServer> {
    const port = await freePort();
    // Everything the bench depends on is set explicitly, because a .env in the project
    // fills in whatever the environment leaves unset (or empty).
    const environment: NodeJS.ProcessEnv = {
      ...terminalEnvironment(process.env),
      PORT: String(port),
      HOST: '127.0.0.1',
      DATA_DIR: options.dataDir,
      DB_PATH: options.databaseFile,
      SESSION_FILES_DIR: path.join(options.dataDir, 'session-files'),
      MCP_CONFIG_FILE: path.join(options.dataDir, 'mcp.json'),
      LOG_LEVEL: 'silent',
      LLM_BACKEND: 'ollama',
      OLLAMA_HOST: options.llmUrl,
      OLLAMA_NUM_CTX: String(benchContextWindow),
      ...options.environment,
    };
    // A token from .env still applies; the client then presents it.
    const { AUTH_TOKEN: token } = loadConfig(environment, path.join(projectRoot, '.env'));
    const headers: Record<string, string> = token === '' ? {} : { authorization: `Bearer ${token}` };
    const launcher = options.launcher ?? 'node';
    if (launcher === 'npm' && options.nodeFlags) throw new Error('npm start takes no extra node flags');
    const spawnedAt = epochNow();
    const child = track(
      launcher === 'npm'
        ? spawn('npm', ['start'], { cwd: projectRoot, env: environment, stdio: ['ignore', 'pipe', 'pipe'], detached: true })
        : spawn(process.execPath, [...(options.nodeFlags ?? []), ...startArguments()], { cwd: projectRoot, env: environment, stdio: ['ignore', 'pipe', 'pipe'] }),
    );
    const server = new ServerProcess(child, `http://127.0.0.1:${port}`, headers, launcher);
    try {
      await server.waitForHealth(30_000);
    } catch (error) {
      await server.stop();
      throw error;
    }
    return { server, startMs: epochNow() - spawnedAt };
  }

  get pid(): number {
    if (this.child.pid === undefined) throw new Error('server process has no pid');
    if (this.launcher === 'npm') throw new Error("started through npm: the child is npm, not the server, and its figures are not the server's");
    return this.child.pid;
  }

  get exited(): boolean {
    return this.child.exitCode !== null || this.child.signalCode !== null;
  }

  /** The last lines the server printed (it runs with LOG_LEVEL=silent, so mostly crashes). */
  recentOutput(): string {
    return this.output;
  }

  /** The command line of the measured pid, to show it is the server itself. */
  async commandLine(): Promise<string> {
    return (await readFile(`/proc/${this.pid}/cmdline`, 'utf8')).split('\0').filter(Boolean).join(' ');
  }

  async residentKilobytes(): Promise<number> {
    return this.statusField('VmRSS', /^VmRSS:\s+(\d+)\s+kB/m);
  }

  /** Threads of the server process (the main thread, libuv's pool, V8's, and one per worker thread). */
  async threads(): Promise<number> {
    return this.statusField('Threads', /^Threads:\s+(\d+)/m);
  }

  private async statusField(name: string, pattern: RegExp): Promise<number> {
    const status = await readFile(`/proc/${this.pid}/status`, 'utf8');
    const match = pattern.exec(status);
    if (!match) throw new Error(`no ${name} in /proc/${this.pid}/status`);
    return Number(match[1]);
  }

  async stop(): Promise<void> {
    if (this.exited) return;
    const exited = new Promise<void>((resolve) => this.child.once('exit', () => resolve()));
    const signal = (name: NodeJS.Signals) => {
      // npm, the shell it runs the script in and the server: the whole group, as a terminal's Ctrl-C would.
      if (this.launcher === 'npm' && this.child.pid !== undefined) process.kill(-this.child.pid, name);
      else this.child.kill(name);
    };
    signal('SIGTERM');
    const timer = setTimeout(() => signal('SIGKILL'), 10_000);
    await exited;
    clearTimeout(timer);
    if (this.launcher === 'npm') await this.groupGone();
  }

  /** npm may exit before the server it started has: the next start on this DATA_DIR waits for its lock. */
  private async groupGone(): Promise<void> {
    for (let attempt = 0; attempt < 1_000; attempt++) {
      try {
        process.kill(-this.child.pid!, 0);
      } catch {
        return;
      }
      await sleep(10);
    }
    process.kill(-this.child.pid!, 'SIGKILL');
  }

  private async waitForHealth(timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      if (this.exited) throw new Error(`server exited (${this.child.exitCode ?? this.child.signalCode}) during start:\n${this.output}`);
      try {
        const response = await fetch(`${this.baseUrl}/health`, { headers: this.headers, signal: AbortSignal.timeout(1_000) });
        await response.arrayBuffer();
        if (response.status === 200) return;
      } catch {
        // Not listening yet.
      }
      await sleep(10);
    }
    throw new Error(`server did not answer /health within ${timeoutMs} ms:\n${this.output}`);
  }
}

/**
 * The environment of the terminal `npm run bench` was typed in: what npm adds for the scripts it
 * runs (npm_*, INIT_CWD, NODE, COLOR, its node_modules/.bin folders on PATH) left out, so that a
 * server, and `npm start` in 5a', start as they would from a person's shell rather than from
 * inside another npm.
 */
function terminalEnvironment(environment: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  if (environment.npm_lifecycle_event === undefined) return environment;
  const added = (name: string) => /^npm_/i.test(name) || ['INIT_CWD', 'NODE', 'COLOR'].includes(name);
  const kept = Object.fromEntries(Object.entries(environment).filter(([name]) => !added(name)));
  const path = (environment.PATH ?? '').split(':').filter((folder) => !/[\\/](node_modules[\\/]\.bin|node-gyp-bin)$/.test(folder));
  return { ...kept, PATH: path.join(':') };
}

/** The node arguments of `npm start`, so the bench measures exactly what a person runs. */
function startArguments(): string[] {
  const manifest = JSON.parse(readFileSync(path.join(projectRoot, 'package.json'), 'utf8')) as { scripts: { start: string } };
  const [command, ...rest] = manifest.scripts.start.split(/\s+/);
  if (command !== 'node') throw new Error(`npm start must run node directly to be measured; it runs "${command}"`);
  return rest;
}
