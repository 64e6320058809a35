import { execFile } from 'node:child_process';
import { X509Certificate, createHash } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** A certificate and its key as files, for TLS_CERT_FILE and TLS_KEY_FILE. */
export interface IssuedPair {
  certFile: string;
  keyFile: string;
  certPem: string;
  keyPem: string;
  /** As a TLS client's getPeerCertificate().fingerprint256 gives it. */
  fingerprint256: string;
}

export interface TestAuthority {
  /** The authority's own certificate: what a client trusts (`ca`). */
  readonly caPem: string;
  /** A new key and a certificate for `localhost` and 127.0.0.1, signed by the authority, in a folder of its own. */
  issue(): Promise<IssuedPair>;
  /** Removes every file it made. */
  close(): Promise<void>;
}

/** A throwaway certificate authority made with Debian's openssl in a temp folder. */
export async function startTestAuthority(): Promise<TestAuthority> {
  const folder = await mkdtemp(path.join(tmpdir(), 'hearth-tls-'));
  const caKey = path.join(folder, 'ca.key');
  const caCert = path.join(folder, 'ca.crt');
  await openssl(['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', caKey, '-out', caCert, '-days', '2',
    '-subj', '/CN=Hearth test authority', '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign']);
  const caPem = await readFile(caCert, 'utf8');
  const extensions = path.join(folder, 'server.ext');
  await writeFile(extensions, 'subjectAltName=DNS:localhost,IP:127.0.0.1\nextendedKeyUsage=serverAuth\n');
  let issued = 0;
  return {
    caPem,
    async issue() {
      issued += 1;
      const keyFile = path.join(folder, `server-${issued}.key`);
      const request = path.join(folder, `server-${issued}.csr`);
      const certFile = path.join(folder, `server-${issued}.crt`);
      await openssl(['req', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', keyFile, '-out', request, '-subj', '/CN=localhost']);
      await openssl(['x509', '-req', '-in', request, '-CA', caCert, '-CAkey', caKey, '-set_serial', String(1000 + issued), '-days', '2', '-extfile', extensions, '-out', certFile]);
      const [certPem, keyPem] = await Promise.all([readFile(certFile, 'utf8'), readFile(keyFile, 'utf8')]);
      return { certFile, keyFile, certPem, keyPem, fingerprint256: new X509Certificate(certPem).fingerprint256 };
    },
    close: () => rm(folder, { recursive: true, force: true }),
  };
}

async function openssl(args: string[]): Promise<void> {
  await run('openssl', args);
}

/** The base64 SHA-256 of a certificate's public key (SPKI), as Chromium's --ignore-certificate-errors-spki-list takes it. */
export function spkiHash(certificatePem: string): string {
  const spki = new X509Certificate(certificatePem).publicKey.export({ type: 'spki', format: 'der' });
  return createHash('sha256').update(spki).digest('base64');
}
