import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';

/**
 * scrypt with N = 2^15, r = 8, p = 1: 32 MiB and about 0.1 s a check on a free core of this
 * machine (0.2 s with both busy), run on libuv's thread pool so the server keeps answering. That
 * is twice Node's default cost and below OWASP's list (N = 2^17, or 2^15 with p = 3: 0.4 s here),
 * a trade for small home servers; the slowing of failed sign-ins (sign-in-throttle.ts) does the
 * rest online. The settings are stored with each hash (`scrypt$N$r$p$salt$hash`, base64url), so
 * raising them later leaves existing passphrases readable.
 */
export const defaultPassphraseCost: PassphraseCost = { N: 2 ** 15, r: 8, p: 1 };
/** scrypt's cost (N), block size (r) and parallelism (p). */
export interface PassphraseCost {
  N: number;
  r: number;
  p: number;
}

const keyLength = 32;
const saltLength = 16;

/** Shortest and longest passphrase accepted anywhere one is chosen. */
export const passphraseLength = { min: 8, max: 1024 } as const;

export async function hashPassphrase(passphrase: string, cost = defaultPassphraseCost): Promise<string> {
  const salt = randomBytes(saltLength);
  const hash = await derive(passphrase, salt, cost);
  return ['scrypt', cost.N, cost.r, cost.p, salt.toString('base64url'), hash.toString('base64url')].join('$');
}

/**
 * Whether the passphrase is the one hashed, compared in constant time. With no hash (no such
 * person, or one who never chose a passphrase) it still derives a key, so the answer takes as
 * long (at `cost`, what new passphrases are hashed with) and says nothing about whether the name exists.
 */
export async function verifyPassphrase(passphrase: string, stored: string | null | undefined, cost = defaultPassphraseCost): Promise<boolean> {
  const parsed = stored ? parse(stored) : undefined;
  if (!parsed) {
    await derive(passphrase, randomBytes(saltLength), cost);
    return false;
  }
  const hash = await derive(passphrase, parsed.salt, parsed.settings);
  return hash.length === parsed.hash.length && timingSafeEqual(hash, parsed.hash);
}

function parse(stored: string): { settings: PassphraseCost; salt: Buffer; hash: Buffer } | undefined {
  const [scheme, cost, blockSize, parallelism, salt, hash] = stored.split('$');
  if (scheme !== 'scrypt' || salt === undefined || hash === undefined) return undefined;
  return { settings: { N: Number(cost), r: Number(blockSize), p: Number(parallelism) }, salt: Buffer.from(salt, 'base64url'), hash: Buffer.from(hash, 'base64url') };
}

function derive(passphrase: string, salt: Buffer, { N, r, p }: PassphraseCost): Promise<Buffer> {
  // scrypt needs 128·N·r bytes; Node's default ceiling (32 MiB) is exactly that, so leave room.
  const options: ScryptOptions = { N, r, p, maxmem: 256 * N * r };
  return new Promise((resolve, reject) => scrypt(passphrase.normalize('NFC'), salt, keyLength, options, (error, key) => (error ? reject(error) : resolve(key))));
}
