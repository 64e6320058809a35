import { closeSync, openSync, readSync } from 'node:fs';

/** How often a host's RSS is read while it runs a call, and while it idles. */
export const busyIntervalMs = 25;
export const idleIntervalMs = 500;

/**
 * Watches one process's resident memory (VmRSS of /proc/<pid>/status, read through a file kept
 * open: one read of a few microseconds a tick) and calls `onOver` once when it passes the
 * limit. Where /proc cannot be read, `available` is false and the host reports its own RSS.
 */
export class RssWatch {
  readonly available: boolean;
  private fd: number | undefined;
  private timer: NodeJS.Timeout | undefined;
  private readonly buffer = Buffer.alloc(4096);
  private stopped = false;

  constructor(
    pid: number,
    private readonly limitBytes: number,
    private readonly isBusy: () => boolean,
    private readonly onOver: (rssBytes: number) => void,
  ) {
    try {
      this.fd = openSync(`/proc/${pid}/status`, 'r');
    } catch {
      this.fd = undefined;
    }
    this.available = this.fd !== undefined;
    if (this.available) this.schedule();
  }

  /** The RSS in bytes, or undefined once the process is gone. */
  read(): number | undefined {
    if (this.fd === undefined) return undefined;
    try {
      const length = readSync(this.fd, this.buffer, 0, this.buffer.length, 0);
      const match = /VmRSS:\s+(\d+) kB/.exec(this.buffer.toString('latin1', 0, length));
      return match ? Number(match[1]) * 1024 : undefined;
    } catch {
      return undefined;
    }
  }

  /** A reading from elsewhere (the host's own report where /proc is missing). */
  check(rssBytes: number): void {
    if (this.stopped || rssBytes <= this.limitBytes) return;
    this.stop();
    this.onOver(rssBytes);
  }

  /** Reads now (a call is starting, so the next tick comes soon). */
  wake(): void {
    if (this.stopped || !this.available) return;
    clearTimeout(this.timer);
    this.tick();
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = undefined;
  }

  private tick(): void {
    const rss = this.read();
    if (rss !== undefined) this.check(rss);
    if (!this.stopped) this.schedule();
  }

  private schedule(): void {
    this.timer = setTimeout(() => this.tick(), this.isBusy() ? busyIntervalMs : idleIntervalMs);
    this.timer.unref();
  }
}
