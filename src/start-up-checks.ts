// What stops start-up, said in one line the person can act on instead of a stack trace.
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import path from 'node:path';
import type { Config } from './config.ts';

const fileSystemReasons: Record<string, string> = {
  EACCES: 'permission denied',
  EPERM: 'permission denied',
  EROFS: 'the file system is read-only',
  ENOTDIR: 'part of the path is a file, not a folder',
  EEXIST: 'a file of that name is in the way',
  ENOSPC: 'the disk is full',
};

const listenReasons: Record<string, string> = {
  EADDRINUSE: 'the port is in use. Stop the other server or set PORT.',
  EACCES: 'permission denied (ports below 1024 need privileges). Set PORT to 1024 or above.',
  EADDRNOTAVAIL: 'this machine has no such address. Set HOST to one of its addresses, or 127.0.0.1.',
  ENOTFOUND: 'the host name does not resolve. Set HOST to an address, or 127.0.0.1.',
};

/** Why DATA_DIR (or the folder of DB_PATH) cannot hold Hearth's state; undefined when both can. */
export function unwritableDataFolder(config: Config): string | undefined {
  const folders = new Set([path.resolve(config.DATA_DIR), path.dirname(path.resolve(config.DB_PATH))]);
  for (const folder of folders) {
    const variable = folder === path.resolve(config.DATA_DIR) ? 'DATA_DIR' : 'DB_PATH';
    const probe = path.join(folder, `.write-check-${process.pid}`);
    try {
      mkdirSync(folder, { recursive: true });
      writeFileSync(probe, '');
      rmSync(probe);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code ?? '';
      const reason = fileSystemReasons[code] ?? (error as Error).message;
      return `Cannot write ${variable} ${folder}: ${reason}. Choose a folder Hearth can write, or fix its permissions.`;
    }
  }
  return undefined;
}

/** The one line for a listen error Node reports by code; undefined for anything else (a bug, shown in full). */
export function listenFailure(error: unknown, host: string, port: number): string | undefined {
  const reason = listenReasons[(error as NodeJS.ErrnoException)?.code ?? ''];
  return reason && `Cannot listen on ${host}:${port}: ${reason}`;
}

/**
 * Tries the address before anything else starts, so a second Hearth on a taken port leaves
 * the data folder, the first one's tool processes and the backend alone.
 */
export function probeListen(host: string, port: number): Promise<string | undefined> {
  if (port === 0) return Promise.resolve(undefined);
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', (error) => resolve(listenFailure(error, host, port) ?? undefined));
    server.listen({ host, port, exclusive: true }, () => server.close(() => resolve(undefined)));
  });
}
