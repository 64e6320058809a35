import { X509Certificate } from 'node:crypto';
import { readFileSync, realpathSync, watch, type FSWatcher } from 'node:fs';
import path from 'node:path';
import { createSecureContext, type SecureContextOptions } from 'node:tls';
import { ConfigError, type Config } from '../config.ts';
import type { Logger } from '../logger.ts';
import { messageOf } from '../failure.ts';

/** TLS_CERT_FILE and TLS_KEY_FILE; config.ts has made sure both are set or neither. */
export interface TlsFiles {
  certFile: string;
  keyFile: string;
}

/** A certificate and its private key that were checked to belong together. */
export interface TlsPair {
  cert: Buffer;
  key: Buffer;
  /** Who the certificate is for and until when, for the log. */
  description: string;
}

export type TlsRead = { pair: TlsPair } | { problem: string };

/** What the reloader swaps the certificate of: Node's https.Server (and tls.Server). */
export interface SecureContextTarget {
  setSecureContext(options: SecureContextOptions): void;
}

export function tlsFilesOf(config: Config): TlsFiles | undefined {
  return config.TLS_CERT_FILE === '' ? undefined : { certFile: config.TLS_CERT_FILE, keyFile: config.TLS_KEY_FILE };
}

/** Reads both files and checks they make a usable pair; a problem says which file and why, in one line. */
export function readTlsPair({ certFile, keyFile }: TlsFiles): TlsRead {
  let cert: Buffer;
  let key: Buffer;
  try {
    cert = readFileSync(certFile);
  } catch (error) {
    return { problem: `Cannot read TLS_CERT_FILE ${certFile}: ${messageOf(error)}` };
  }
  try {
    key = readFileSync(keyFile);
  } catch (error) {
    return { problem: `Cannot read TLS_KEY_FILE ${keyFile}: ${messageOf(error)}` };
  }
  let certificate: X509Certificate;
  try {
    certificate = new X509Certificate(cert);
  } catch (error) {
    return { problem: `TLS_CERT_FILE ${certFile} holds no PEM certificate: ${messageOf(error)}` };
  }
  try {
    createSecureContext({ cert, key });
  } catch (error) {
    return { problem: `TLS_KEY_FILE ${keyFile} is not the private key of TLS_CERT_FILE ${certFile} (or not a PEM key): ${messageOf(error)}` };
  }
  const names = certificate.subjectAltName ?? certificate.subject.replace(/\n/g, ', ');
  return { pair: { cert, key, description: `${names}, valid until ${certificate.validTo}` } };
}

/** The pair to start with; a problem stops start-up (start-server.ts has said it already, before the database opened). */
export function startingTlsPair(files: TlsFiles): TlsPair {
  const read = readTlsPair(files);
  if ('problem' in read) throw new ConfigError(read.problem);
  return read.pair;
}

export interface TlsReloaderOptions {
  files: TlsFiles;
  server: SecureContextTarget;
  /** The pair the server was started with. */
  current: TlsPair;
  logger: Logger;
  /** Quiet time after the last change of a burst (a renewal writes several files) before the pair is read. */
  debounceMs?: number;
}

export interface TlsReloader {
  close(): void;
}

/**
 * Watches the folders of both files (and of their targets, for certbot's symlinks in live/) and,
 * once a burst of changes is over, reads the pair again: a good new pair serves every connection
 * from then on; a half-written or mismatched one is logged and the previous pair stays.
 */
export function watchTlsPair({ files, server, logger, debounceMs = 100, ...options }: TlsReloaderOptions): TlsReloader {
  let current = options.current;
  let timer: NodeJS.Timeout | undefined;
  logger.info(`serving HTTPS with the certificate for ${current.description}`);
  const reload = () => {
    timer = undefined;
    const read = readTlsPair(files);
    if ('problem' in read) {
      logger.warn(`TLS certificate not reloaded, still serving the previous one: ${read.problem}`);
      return;
    }
    if (read.pair.cert.equals(current.cert) && read.pair.key.equals(current.key)) return;
    try {
      server.setSecureContext({ cert: read.pair.cert, key: read.pair.key });
    } catch (error) {
      logger.warn(`TLS certificate not reloaded, still serving the previous one: ${messageOf(error)}`);
      return;
    }
    current = read.pair;
    logger.info(`TLS certificate reloaded: ${read.pair.description}`);
  };
  const watchers: FSWatcher[] = [];
  for (const folder of watchedFolders(files)) {
    try {
      const watcher = watch(folder, (_event, name) => {
        if (name !== null && !watchedNames(files).has(name.toString())) return;
        clearTimeout(timer);
        timer = setTimeout(reload, debounceMs);
      });
      watcher.on('error', (error) => logger.warn(`watching ${folder} for a renewed TLS certificate failed: ${messageOf(error)}`));
      watchers.push(watcher);
    } catch (error) {
      logger.warn(`cannot watch ${folder} for a renewed TLS certificate (a renewal then needs a restart): ${messageOf(error)}`);
    }
  }
  return {
    close() {
      clearTimeout(timer);
      for (const watcher of watchers) watcher.close();
    },
  };
}

function bothPaths({ certFile, keyFile }: TlsFiles): string[] {
  const paths = [path.resolve(certFile), path.resolve(keyFile)];
  for (const file of [...paths]) {
    try {
      paths.push(realpathSync(file));
    } catch {
      // Gone for the moment (a renewal replacing it): its configured path is watched all the same.
    }
  }
  return paths;
}

function watchedFolders(files: TlsFiles): Set<string> {
  return new Set(bothPaths(files).map((file) => path.dirname(file)));
}

/** The names a change must touch to count: the files themselves and, where they are symlinks, their targets as they are now. */
function watchedNames(files: TlsFiles): Set<string> {
  return new Set(bothPaths(files).map((file) => path.basename(file)));
}
