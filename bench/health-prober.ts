import { type ChildProcess, fork } from 'node:child_process';
import { once } from 'node:events';
import path from 'node:path';
import { track } from './child-processes.ts';
import type { HealthProberCommand, HealthProberReport } from './health-prober-process.ts';
import { projectRoot } from './project-root.ts';
import type { ServerProcess } from './server-process.ts';

/** GET /health timed back to back from a process of its own (bench/health-prober-process.ts). */
export class HealthProber {
  private constructor(private readonly child: ChildProcess) {}

  static async start(): Promise<HealthProber> {
    const child = track(
      fork(path.join(projectRoot, 'bench', 'health-prober-process.ts'), [], { cwd: projectRoot, execArgv: ['--import', 'tsx'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] }),
    );
    await once(child, 'spawn');
    return new HealthProber(child);
  }

  /** The time of every request from now until `busy` settles (and at least `minimumRequests`); rejects as `busy` does. */
  async timesUntil(server: ServerProcess, busy: Promise<unknown>, minimumRequests = 1): Promise<number[]> {
    const report = new Promise<HealthProberReport>((resolve, reject) => {
      const exited = (code: number | null) => reject(new Error(`the /health prober exited (${code}) while timing`));
      this.child.once('exit', exited);
      this.child.once('message', (message: HealthProberReport) => {
        this.child.off('exit', exited);
        resolve(message);
      });
    });
    this.send({ type: 'start', url: `${server.baseUrl}/health`, headers: server.headers, minimumRequests });
    await busy.catch(() => undefined);
    this.send({ type: 'stop' });
    const settled = await report;
    await busy;
    if (settled.type === 'failed') throw new Error(`the /health prober failed: ${settled.message}`);
    return settled.times;
  }

  async timesFor(server: ServerProcess, durationMs: number): Promise<number[]> {
    return this.timesUntil(server, new Promise((resolve) => setTimeout(resolve, durationMs)));
  }

  async close(): Promise<void> {
    if (this.child.exitCode !== null) return;
    const exited = once(this.child, 'exit');
    this.child.disconnect();
    await exited;
  }

  private send(command: HealthProberCommand): void {
    this.child.send(command);
  }
}
