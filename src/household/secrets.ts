import { createHash, randomBytes } from 'node:crypto';

/** 256 random bits, URL-safe: a sign-in's cookie value or a personal API token. */
export function newSecret(prefix = ''): string {
  return prefix + randomBytes(32).toString('base64url');
}

/**
 * What is stored of a secret. SHA-256 without salt is enough for 256 random bits (nobody can
 * guess one to test against it), and it is fast enough for the check every request makes.
 */
export function digestOf(secret: string): string {
  return createHash('sha256').update(secret).digest('base64url');
}
