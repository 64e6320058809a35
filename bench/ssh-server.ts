// Parent side of the loopback SSH server child process: start it with fresh credentials,
// learn its port and host key fingerprint, ask it what it served, stop it.
import { fork, type ChildProcess } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import path from 'node:path';
import { track } from './child-processes.ts';
import { projectRoot } from './project-root.ts';
import type { SshServerCommand, SshServerReport, SshServerStats } from './ssh-server-protocol.ts';

/**
 * The OpenSSH fingerprint of a public key line (`ssh-ed25519 AAAA… comment`): `SHA256:` and the
 * unpadded base64 SHA-256 of the key blob, as `ssh-keygen -l` prints it. Computed here rather
 * than with src/'s fingerprintOf, so the hosts file does not trust the code it checks.
 */
export function openSshFingerprint(publicKeyLine: string): string {
  const blob = publicKeyLine.trim().split(/\s+/)[1];
  if (!blob) throw new Error(`not an OpenSSH public key: ${publicKeyLine}`);
  return `SHA256:${createHash('sha256').update(Buffer.from(blob, 'base64')).digest('base64').replace(/=+$/, '')}`;
}

export class SshServerProcess {
  private nextId = 1;
  private readonly replies = new Map<number, (report: SshServerReport) => void>();

  private constructor(
    private readonly child: ChildProcess,
    readonly port: number,
    readonly hostKeyFingerprint: string,
    readonly username: string,
    readonly password: string,
  ) {
    child.on('message', (report: SshServerReport) => {
      if (!('id' in report)) return;
      const settle = this.replies.get(report.id);
      this.replies.delete(report.id);
      settle?.(report);
    });
  }

  static start(): Promise<SshServerProcess> {
    const username = 'bench';
    const password = randomBytes(18).toString('base64url');
    const child = track(
      fork(path.join(projectRoot, 'bench', 'loopback-ssh-server-process.ts'), [], {
        cwd: projectRoot,
        execArgv: ['--import', 'tsx'],
        env: { ...process.env, BENCH_SSH_USERNAME: username, BENCH_SSH_PASSWORD: password },
        stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
      }),
    );
    return new Promise((resolve, reject) => {
      const onExit = (code: number | null) => reject(new Error(`SSH server process exited (${code}) before it was ready`));
      child.once('exit', onExit);
      child.once('error', reject);
      child.once('message', (report: SshServerReport) => {
        child.off('exit', onExit);
        if (report.type !== 'ready') return reject(new Error(`SSH server process sent ${report.type} before ready`));
        resolve(new SshServerProcess(child, report.port, openSshFingerprint(report.publicKey), username, password));
      });
    });
  }

  get exited(): boolean {
    return this.child.exitCode !== null || this.child.signalCode !== null;
  }

  stats(): Promise<SshServerStats> {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.replies.delete(id);
        reject(new Error('SSH server process did not answer stats'));
      }, 5_000);
      this.replies.set(id, (report) => {
        clearTimeout(timer);
        if (report.type !== 'stats') return reject(new Error(`SSH server process answered stats with ${report.type}`));
        resolve({ connections: report.connections, open: report.open, execs: report.execs });
      });
      this.child.send({ id, type: 'stats' } satisfies SshServerCommand);
    });
  }

  async stop(): Promise<void> {
    if (this.exited) return;
    const exited = new Promise<void>((resolve) => this.child.once('exit', () => resolve()));
    if (this.child.connected) this.child.disconnect();
    const timer = setTimeout(() => this.child.kill('SIGKILL'), 3_000);
    await exited;
    clearTimeout(timer);
  }
}
