import { createHash } from 'node:crypto';

/** The OpenSSH-style fingerprint of a raw public key blob: `SHA256:` and unpadded base64. */
export function fingerprintOf(publicKey: Buffer): string {
  return `SHA256:${createHash('sha256').update(publicKey).digest('base64').replace(/=+$/, '')}`;
}

/** Compares fingerprints as OpenSSH prints them, tolerating base64 padding. */
export function sameFingerprint(expected: string, actual: string): boolean {
  return expected.trim().replace(/=+$/, '') === actual.replace(/=+$/, '');
}

/** The connection was refused because the server's host key is not the trusted one. */
export class HostKeyRejectedError extends Error {
  override name = 'HostKeyRejectedError';

  constructor(readonly fingerprint: string) {
    super(`Host key ${fingerprint} was not accepted`);
  }
}
