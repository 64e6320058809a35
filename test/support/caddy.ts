import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import tls from 'node:tls';
import { freeLoopbackPort } from './loopback-port.ts';
import { waitUntil } from './wait-until.ts';

/** Debian's Caddy (`apt-get install -y caddy`); `.ci/run` installs it when missing. */
export const caddyPath = process.env.HEARTH_CADDY ?? '/usr/bin/caddy';
export const caddyAvailable = existsSync(caddyPath);
/** Set by CI: a missing Caddy then fails the proxy tests instead of skipping them. */
export const caddyRequired = process.env.HEARTH_REQUIRE_CADDY === '1';

export interface Caddy {
  /** `https://localhost:<port>`: Caddy's listener, in front of the upstream. */
  readonly url: string;
  /** The root certificate of Caddy's own authority (`tls internal`), which a client trusts. */
  readonly rootPem: string;
  /** The intermediate that signs its site certificates. */
  readonly intermediatePem: string;
  /** The Caddyfile it runs, as written. */
  readonly caddyfile: string;
  /** Ends Caddy, waits for its process to exit and removes its folder. */
  close(): Promise<void>;
}

/**
 * Caddy on a loopback port as a reverse proxy to `upstream` (`127.0.0.1:<port>`), with a
 * certificate for `localhost` from its internal authority. Everything it writes (its authority,
 * certificates, autosaved config) stays in a temp folder: HOME and the XDG folders point there,
 * storage too, and `skip_install_trust` keeps its root out of the system's trust store.
 */
export async function startCaddy(upstream: string): Promise<Caddy> {
  if (!caddyAvailable) throw new Error(`Caddy not found at ${caddyPath}; install it with "apt-get install -y caddy" (HEARTH_REQUIRE_CADDY=1 makes this a failure).`);
  const folder = await mkdtemp(path.join(tmpdir(), 'hearth-caddy-'));
  const [httpsPort, httpPort] = [await freeLoopbackPort(), await freeLoopbackPort()];
  const storage = path.join(folder, 'storage');
  const caddyfile = [
    '{',
    '\tadmin off',
    '\tskip_install_trust',
    '\tauto_https disable_redirects',
    `\thttp_port ${httpPort}`,
    `\thttps_port ${httpsPort}`,
    `\tstorage file_system ${storage}`,
    // No HTTP/3: its UDP listener would not honour the site's bind.
    '\tservers {',
    '\t\tprotocols h1 h2',
    '\t}',
    '}',
    '',
    `https://localhost:${httpsPort} {`,
    '\tbind 127.0.0.1',
    '\ttls internal',
    `\treverse_proxy ${upstream}`,
    '}',
    '',
  ].join('\n');
  const configFile = path.join(folder, 'Caddyfile');
  await writeFile(configFile, caddyfile);

  const child = spawn(caddyPath, ['run', '--config', configFile, '--adapter', 'caddyfile'], {
    cwd: folder,
    env: { PATH: process.env.PATH, HOME: folder, XDG_DATA_HOME: path.join(folder, 'data'), XDG_CONFIG_HOME: path.join(folder, 'config') },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
      child.kill('SIGTERM');
      await exited;
    }
    await rm(folder, { recursive: true, force: true });
  };
  try {
    await ready(child);
  } catch (error) {
    await stop();
    throw error;
  }
  const authority = path.join(storage, 'pki', 'authorities', 'local');
  const [rootPem, intermediatePem] = await Promise.all([readFile(path.join(authority, 'root.crt'), 'utf8'), readFile(path.join(authority, 'intermediate.crt'), 'utf8')]);
  // Caddy logs the certificate as obtained before it caches it for handshakes: until then a client gets
  // "tlsv1 alert internal error" (seen once on a loaded machine). Ready means a handshake succeeds.
  try {
    await waitUntil(() => handshakes(httpsPort, rootPem), 15_000);
  } catch (error) {
    await stop();
    throw error;
  }
  return { url: `https://localhost:${httpsPort}`, rootPem, intermediatePem, caddyfile, close: stop };
}

/** Resolves once Caddy's log says it serves its configuration and holds the certificate for localhost. */
function ready(child: ChildProcess, timeoutMs = 15_000): Promise<void> {
  return new Promise((resolve, reject) => {
    let output = '';
    let serving = false;
    let certified = false;
    const timer = setTimeout(() => finish(new Error(`Caddy was not ready within ${timeoutMs} ms:\n${output}`)), timeoutMs);
    const finish = (error?: Error) => {
      clearTimeout(timer);
      child.stderr!.removeListener('data', onData);
      child.removeListener('exit', onExit);
      // Drained from now on: a full pipe would stall Caddy.
      child.stderr!.resume();
      if (error) reject(error);
      else resolve();
    };
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      for (const line of output.split('\n')) {
        if (line.includes('"serving initial configuration"')) serving = true;
        if (line.includes('"certificate obtained successfully"') && line.includes('"identifier":"localhost"')) certified = true;
      }
      if (serving && certified) finish();
    };
    const onExit = (code: number | null) => finish(new Error(`Caddy exited (${code}) before it was ready:\n${output}`));
    child.stderr!.on('data', onData);
    child.once('exit', onExit);
  });
}

/** Whether a TLS handshake with `localhost` on the port completes with a certificate the authority signed. */
function handshakes(port: number, rootPem: string): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = tls.connect({ host: '127.0.0.1', port, servername: 'localhost', ca: rootPem }, () => {
      socket.end();
      resolve(true);
    });
    socket.once('error', () => {
      socket.destroy();
      resolve(false);
    });
  });
}
