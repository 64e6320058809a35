import { createHash, generateKeyPairSync, randomBytes, sign, type KeyObject } from 'node:crypto';
import { isoCBOR } from '@simplewebauthn/server/helpers';

// A passkey authenticator in software, as a browser's WebAuthn API would answer for one: ES256,
// "none" attestation, user present and verified, a signature counter. For the server's side of
// passkeys only; a browser with a virtual authenticator is the page's.

const flags = { userPresent: 0x01, userVerified: 0x04, attestedCredential: 0x40 } as const;

export interface SoftwarePasskey {
  /** navigator.credentials.create() for these options, answered as JSON (the body POST /me/passkeys takes). */
  create(options: { challenge: string; rp: { id?: string }; user: { id: string } }, origin: string): Record<string, unknown>;
  /** navigator.credentials.get() for these options. */
  get(options: { challenge: string; rpId?: string }, origin: string): Record<string, unknown>;
}

export function softwarePasskey(): SoftwarePasskey {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const credentialId = randomBytes(32);
  let userHandle = '';
  let counter = 0;
  return {
    create(options, origin) {
      userHandle = options.user.id;
      const clientDataJSON = clientData('webauthn.create', options.challenge, origin);
      const authData = Buffer.concat([
        rpIdHash(options.rp.id!),
        Buffer.from([flags.userPresent | flags.userVerified | flags.attestedCredential]),
        uint32(counter),
        Buffer.alloc(16),
        Buffer.from([0, credentialId.length]),
        credentialId,
        Buffer.from(coseKey(publicKey)),
      ]);
      const attestationObject = isoCBOR.encode(new Map<string, unknown>([['fmt', 'none'], ['attStmt', new Map()], ['authData', new Uint8Array(authData)]]) as never);
      return {
        id: credentialId.toString('base64url'),
        rawId: credentialId.toString('base64url'),
        type: 'public-key',
        response: { clientDataJSON: clientDataJSON.toString('base64url'), attestationObject: Buffer.from(attestationObject).toString('base64url'), transports: ['internal'] },
        clientExtensionResults: {},
        authenticatorAttachment: 'platform',
      };
    },
    get(options, origin) {
      counter += 1;
      const clientDataJSON = clientData('webauthn.get', options.challenge, origin);
      const authData = Buffer.concat([rpIdHash(options.rpId!), Buffer.from([flags.userPresent | flags.userVerified]), uint32(counter)]);
      const signature = sign('sha256', Buffer.concat([authData, createHash('sha256').update(clientDataJSON).digest()]), privateKey);
      return {
        id: credentialId.toString('base64url'),
        rawId: credentialId.toString('base64url'),
        type: 'public-key',
        response: {
          clientDataJSON: clientDataJSON.toString('base64url'),
          authenticatorData: authData.toString('base64url'),
          signature: signature.toString('base64url'),
          userHandle,
        },
        clientExtensionResults: {},
        authenticatorAttachment: 'platform',
      };
    },
  };
}

function clientData(type: string, challenge: string, origin: string): Buffer {
  return Buffer.from(JSON.stringify({ type, challenge, origin, crossOrigin: false }));
}

function rpIdHash(rpId: string): Buffer {
  return createHash('sha256').update(rpId).digest();
}

function uint32(value: number): Buffer {
  const buffer = Buffer.alloc(4);
  buffer.writeUInt32BE(value);
  return buffer;
}

/** The public key as COSE: EC2 (1: 2), ES256 (3: -7), P-256 (-1: 1), x (-2), y (-3). */
function coseKey(publicKey: KeyObject): Uint8Array {
  const jwk = publicKey.export({ format: 'jwk' });
  return isoCBOR.encode(
    new Map<number, unknown>([
      [1, 2],
      [3, -7],
      [-1, 1],
      [-2, new Uint8Array(Buffer.from(jwk.x!, 'base64url'))],
      [-3, new Uint8Array(Buffer.from(jwk.y!, 'base64url'))],
    ]) as never,
  );
}
