import { copyFile, mkdir, mkdtemp, rename, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { ConfigError, parseConfig } from '../src/config.ts';
import { useHearth, type Hearth } from './support/hearth-server.ts';
import { httpsClient, type HttpsClient } from './support/https-client.ts';
import { recordingLogger } from './support/recording-logger.ts';
import { startTestAuthority, type IssuedPair, type TestAuthority } from './support/tls-certificates.ts';
import { waitUntil } from './support/wait-until.ts';

const start = useHearth();
let authority: TestAuthority;
beforeAll(async () => {
  authority = await startTestAuthority();
});
afterAll(() => authority.close());

/** Copies a pair to the file names Hearth is configured with, so the test can replace them later. */
async function served(pair: IssuedPair, folder: string): Promise<{ certFile: string; keyFile: string }> {
  const certFile = path.join(folder, 'fullchain.pem');
  const keyFile = path.join(folder, 'privkey.pem');
  await copyFile(pair.certFile, certFile);
  await copyFile(pair.keyFile, keyFile);
  return { certFile, keyFile };
}

/** Writes a file the way a renewal tool does: a temporary file beside it, renamed over it. */
async function replaceFile(file: string, text: string): Promise<void> {
  const temporary = `${file}.new`;
  await writeFile(temporary, text);
  await rename(temporary, file);
}

async function httpsHearth(): Promise<{ hearth: Hearth; client: HttpsClient; files: { certFile: string; keyFile: string }; first: IssuedPair; lines: string[] }> {
  const first = await authority.issue();
  const { logger, lines } = recordingLogger();
  // Files in a folder of their own, as certbot's live/ folder, removed after the test.
  const folder = await mkdtemp(path.join(tmpdir(), 'hearth-tls-live-'));
  onTestFinished(() => rm(folder, { recursive: true, force: true }));
  const files = await served(first, folder);
  const hearth = await start({ logger, env: { TLS_CERT_FILE: files.certFile, TLS_KEY_FILE: files.keyFile } });
  const client = httpsClient(`https://localhost:${new URL(hearth.baseUrl).port}`, authority.caPem);
  return { hearth, client, files, first, lines };
}

describe('TLS_CERT_FILE and TLS_KEY_FILE', () => {
  it('are both set or neither, or the configuration is refused naming the missing one', () => {
    expect(() => parseConfig({ TLS_CERT_FILE: '/etc/hearth/cert.pem' })).toThrow(
      new ConfigError('TLS_CERT_FILE is set without TLS_KEY_FILE: HTTPS needs both the certificate and its private key. Set both, or neither for plain HTTP.'),
    );
    expect(() => parseConfig({ TLS_KEY_FILE: '/etc/hearth/key.pem' })).toThrow(
      new ConfigError('TLS_KEY_FILE is set without TLS_CERT_FILE: HTTPS needs both the certificate and its private key. Set both, or neither for plain HTTP.'),
    );
    expect(parseConfig({ TLS_CERT_FILE: 'cert.pem', TLS_KEY_FILE: 'key.pem' })).toMatchObject({ TLS_CERT_FILE: 'cert.pem', TLS_KEY_FILE: 'key.pem' });
  });

  it('serve the page, /health, both sockets and a streamed answer over HTTPS to a client trusting the authority', async () => {
    const { hearth, client, first, lines } = await httpsHearth();
    try {
      expect(await client.servedFingerprint()).toBe(first.fingerprint256);
      expect(lines.some((line) => JSON.parse(line).msg.startsWith('serving HTTPS with the certificate for DNS:localhost, IP Address:127.0.0.1, valid until '))).toBe(true);
      const page = await client.request('GET', '/');
      expect(page.status).toBe(200);
      expect(page.text).toContain('<title>');
      // HTTPS is offered, not forced: a person may still reach a plain-HTTP Hearth later on the same name.
      expect(page.headers.get('strict-transport-security')).toBeNull();
      const health = await client.request('GET', '/health');
      expect(health).toMatchObject({ status: 200, body: { status: 'ok' } });

      const events = await client.socket('/ws/events');
      expect((await events.nextMatching((event) => (event as { type: string }).type === 'hello', 'hello')) as unknown).toMatchObject({ type: 'hello', unread_notifications: 0 });

      const created = await client.request('POST', '/sessions', {});
      expect(created.status).toBe(201);
      const socket = await client.socket(`/ws/sessions/${created.body.session_id}`);
      await socket.next('session_sync');
      hearth.llm.script({ chunks: ['Over ', 'TLS ', 'too.'] });
      socket.send({ type: 'message', content: 'Are you there?' });
      expect((await socket.next('stream_delta')).delta).toBe('Over ');
      expect((await socket.next('stream_end')).content).toBe('Over TLS too.');
      expect(socket.ofType('stream_delta').map((event) => event.delta).join('')).toBe('Over TLS too.');
      socket.close();
      events.close();
    } finally {
      await client.close();
    }
  });

  it('refuse a client that does not trust the authority (the certificate is really checked)', async () => {
    const { client } = await httpsHearth();
    await client.close();
    const other = await startTestAuthority();
    const stranger = httpsClient(client.baseUrl, other.caPem);
    try {
      await expect(stranger.request('GET', '/health')).rejects.toThrow(/fetch failed/);
      await expect(stranger.servedFingerprint()).rejects.toThrow(/unable to verify the first certificate|self.signed|unable to get local issuer/);
    } finally {
      await stranger.close();
      await other.close();
    }
  });

  it('mark the sign-in cookie Secure when it is set over HTTPS', async () => {
    const { hearth, client } = await httpsHearth();
    try {
      const owner = await hearth.deps.household.firstOwner();
      const passphrase = 'passphrase of the owner';
      expect((await hearth.deps.accounts.people.update(owner.id, { passphrase })).ok).toBe(true);
      const response = await client.request('POST', '/auth/sign-in', { name: owner.name, passphrase });
      expect(response.status).toBe(200);
      const cookie = response.headers.get('set-cookie') ?? '';
      expect(cookie.split('; ')).toEqual(expect.arrayContaining(['HttpOnly', 'SameSite=Strict', 'Secure']));
    } finally {
      await client.close();
    }
  });

  it('serve a renewed certificate to new connections without a restart', async () => {
    const { client, files, first, lines } = await httpsHearth();
    try {
      const socket = await client.socket('/ws/events');
      const renewed = await authority.issue();
      expect(renewed.fingerprint256).not.toBe(first.fingerprint256);
      await replaceFile(files.keyFile, renewed.keyPem);
      await replaceFile(files.certFile, renewed.certPem);
      await waitUntil(() => lines.some((line) => line.includes('TLS certificate reloaded')));
      expect(await client.servedFingerprint()).toBe(renewed.fingerprint256);
      expect((await client.request('GET', '/health')).status).toBe(200);
      // A socket opened before the renewal goes on; only new connections get the new certificate.
      expect(socket.closeCode).toBeUndefined();
      socket.close();
    } finally {
      await client.close();
    }
  });

  it("follow a renewal in certbot's layout: symlinks in live/ moved to new files in archive/", async () => {
    const first = await authority.issue();
    const folder = await mkdtemp(path.join(tmpdir(), 'hearth-certbot-'));
    try {
      const archive = path.join(folder, 'archive');
      const live = path.join(folder, 'live');
      await Promise.all([mkdir(archive), mkdir(live)]);
      const point = async (name: string, target: string) => {
        // certbot makes the new link beside the old one and renames it over, as here.
        await symlink(path.relative(live, target), path.join(live, `${name}.new`));
        await rename(path.join(live, `${name}.new`), path.join(live, name));
      };
      const keep = async (pair: IssuedPair, number: number) => {
        await copyFile(pair.certFile, path.join(archive, `fullchain${number}.pem`));
        await copyFile(pair.keyFile, path.join(archive, `privkey${number}.pem`));
      };
      await keep(first, 1);
      await point('fullchain.pem', path.join(archive, 'fullchain1.pem'));
      await point('privkey.pem', path.join(archive, 'privkey1.pem'));
      const { logger, lines } = recordingLogger();
      const hearth = await start({ logger, env: { TLS_CERT_FILE: path.join(live, 'fullchain.pem'), TLS_KEY_FILE: path.join(live, 'privkey.pem') } });
      const client = httpsClient(`https://localhost:${new URL(hearth.baseUrl).port}`, authority.caPem);
      try {
        expect(await client.servedFingerprint()).toBe(first.fingerprint256);
        const renewed = await authority.issue();
        await keep(renewed, 2);
        await point('privkey.pem', path.join(archive, 'privkey2.pem'));
        await point('fullchain.pem', path.join(archive, 'fullchain2.pem'));
        await waitUntil(() => lines.some((line) => line.includes('TLS certificate reloaded')));
        expect(await client.servedFingerprint()).toBe(renewed.fingerprint256);
      } finally {
        await client.close();
        await hearth.close();
      }
    } finally {
      await rm(folder, { recursive: true, force: true });
    }
  });

  it('keep the previous certificate when the new files are half written or do not belong together, and say why', async () => {
    const { client, files, first, lines } = await httpsHearth();
    try {
      const other = await authority.issue();
      // A renewal caught between its two files: the new key beside the old certificate.
      await replaceFile(files.keyFile, other.keyPem);
      const mismatch = await waitUntil(() => lines.find((line) => line.includes('TLS certificate not reloaded')));
      expect(JSON.parse(mismatch).msg).toMatch(/^TLS certificate not reloaded, still serving the previous one: TLS_KEY_FILE .*privkey\.pem is not the private key of TLS_CERT_FILE .*fullchain\.pem/);
      expect(await client.servedFingerprint()).toBe(first.fingerprint256);

      // A certificate cut off in the middle.
      await replaceFile(files.keyFile, first.keyPem);
      await replaceFile(files.certFile, first.certPem.slice(0, first.certPem.length / 2));
      const cut = await waitUntil(() => lines.find((line) => line.includes('holds no PEM certificate')));
      expect(JSON.parse(cut).level).toBe(40);
      expect(await client.servedFingerprint()).toBe(first.fingerprint256);
      expect((await client.request('GET', '/health')).status).toBe(200);
      expect(lines.some((line) => line.includes('TLS certificate reloaded'))).toBe(false);
    } finally {
      await client.close();
    }
  });
});
