import type {
  AuthenticationResponseJSON,
  PublicKeyCredentialCreationOptionsJSON,
  PublicKeyCredentialRequestOptionsJSON,
  RegistrationResponseJSON,
} from '@simplewebauthn/server';
import { refusal, messageOf, type Refusal } from '../failure.ts';
import type { Logger } from '../logger.ts';
import type { Person } from '../people/person.ts';
import type { Db } from '../store/database.ts';
import { deletePasskey, findPasskey, insertPasskey, listPasskeys, recordPasskeyUse, type StoredPasskey } from '../store/passkeys-repository.ts';
import type { Clock } from '../time/clock.ts';
import type { Household } from './household.ts';

export type { StoredPasskey };

/** Where the page runs, as WebAuthn names it: the host name (its RP ID) and the origin. */
export interface RelyingParty {
  id: string;
  origin: string;
}

// Loaded at the first passkey ceremony, not at start: with its ASN.1 and X.509 dependencies it
// costs start-up time and memory a Hearth whose people use passphrases never needs.
const webAuthn = () => import('@simplewebauthn/server');

/** How long a ceremony's challenge may be answered. */
const challengeLifetimeMs = 5 * 60_000;
/** Challenges remembered at once; the oldest go beyond it, so asking for options cannot fill memory. */
const rememberedChallenges = 1000;

interface Challenge {
  purpose: 'register' | 'sign_in';
  personId?: string;
  rpId: string;
  expiresAt: number;
}


/**
 * Passkeys, a second way to sign in (WebAuthn, through @simplewebauthn/server): a signed-in person
 * registers one from their page, and anyone may then sign in with it without a name. Each
 * challenge is one-time, kept in memory for five minutes, for one purpose and one host.
 */
export class Passkeys {
  private readonly challenges = new Map<string, Challenge>();

  constructor(private readonly options: { db: Db; household: Household; clock: Clock; logger: Pick<Logger, 'warn' | 'info'> }) {}

  async registrationOptions(person: Person, rp: RelyingParty): Promise<PublicKeyCredentialCreationOptionsJSON> {
    const existing = await listPasskeys(this.options.db, person.id);
    const { generateRegistrationOptions } = await webAuthn();
    const options = await generateRegistrationOptions({
      rpName: 'Hearth',
      rpID: rp.id,
      userName: person.name,
      userID: new TextEncoder().encode(person.id),
      attestationType: 'none',
      excludeCredentials: existing.map((passkey) => ({ id: passkey.id, transports: passkey.transports })),
      authenticatorSelection: { residentKey: 'required', userVerification: 'required' },
    });
    this.remember(options.challenge, { purpose: 'register', personId: person.id, rpId: rp.id });
    return options;
  }

  async register(person: Person, response: RegistrationResponseJSON, rp: RelyingParty, name: string): Promise<{ ok: true; passkey: StoredPasskey } | ({ ok: false } & Refusal<'invalid_request'>)> {
    const { verifyRegistrationResponse } = await webAuthn();
    let verified;
    try {
      verified = await verifyRegistrationResponse({
        response,
        expectedChallenge: (challenge) => this.take(challenge, { purpose: 'register', personId: person.id, rpId: rp.id }),
        expectedOrigin: rp.origin,
        expectedRPID: rp.id,
        requireUserVerification: true,
      });
    } catch (error) {
      return refusal('invalid_request', `The passkey was not registered: ${messageOf(error)}`);
    }
    if (!verified.verified) return refusal('invalid_request', 'The passkey was not registered: the authenticator\'s answer did not verify.');
    const { credential } = verified.registrationInfo;
    const passkey: StoredPasskey = {
      id: credential.id,
      personId: person.id,
      name,
      publicKey: Buffer.from(credential.publicKey).toString('base64url'),
      counter: credential.counter,
      transports: credential.transports ?? [],
      createdAt: this.options.clock.now().toISOString(),
      lastUsedAt: null,
    };
    await insertPasskey(this.options.db, passkey);
    return { ok: true, passkey };
  }

  async signInOptions(rp: RelyingParty): Promise<PublicKeyCredentialRequestOptionsJSON> {
    // No allowCredentials: the authenticator offers the passkeys it holds for this host, and the
    // answer says whose it is.
    const { generateAuthenticationOptions } = await webAuthn();
    const options = await generateAuthenticationOptions({ rpID: rp.id, userVerification: 'required' });
    this.remember(options.challenge, { purpose: 'sign_in', rpId: rp.id });
    return options;
  }

  /** Whose passkey answered the challenge; every failure is the same refusal, logged with the address. */
  async signIn(response: AuthenticationResponseJSON, rp: RelyingParty, address: string): Promise<{ ok: true; person: Person } | ({ ok: false } & Refusal<'passkey_failed'>)> {
    const { db, household, clock, logger } = this.options;
    const failed = (why: string) => {
      logger.warn({ address, passkey: response.id, why }, 'passkey sign-in failed');
      return refusal('passkey_failed', 'That passkey did not sign anyone in here.');
    };
    const passkey = typeof response.id === 'string' ? await findPasskey(db, response.id) : undefined;
    if (!passkey) return failed('unknown passkey');
    const person = await household.person(passkey.personId);
    if (!person) return failed('no such person');
    const { verifyAuthenticationResponse } = await webAuthn();
    let verified;
    try {
      verified = await verifyAuthenticationResponse({
        response,
        expectedChallenge: (challenge) => this.take(challenge, { purpose: 'sign_in', rpId: rp.id }),
        expectedOrigin: rp.origin,
        expectedRPID: rp.id,
        credential: { id: passkey.id, publicKey: Buffer.from(passkey.publicKey, 'base64url'), counter: passkey.counter, transports: passkey.transports },
        requireUserVerification: true,
      });
    } catch (error) {
      return failed(messageOf(error));
    }
    if (!verified.verified) return failed('signature did not verify');
    await recordPasskeyUse(db, passkey.id, verified.authenticationInfo.newCounter, clock.now().toISOString());
    logger.info({ name: person.name, address }, 'signed in with a passkey');
    return { ok: true, person };
  }

  list(personId: string): Promise<StoredPasskey[]> {
    return listPasskeys(this.options.db, personId);
  }

  remove(personId: string, id: string): Promise<boolean> {
    return deletePasskey(this.options.db, personId, id);
  }

  private remember(challenge: string, what: Omit<Challenge, 'expiresAt'>): void {
    this.challenges.set(challenge, { ...what, expiresAt: this.options.clock.now().getTime() + challengeLifetimeMs });
    if (this.challenges.size > rememberedChallenges) this.challenges.delete(this.challenges.keys().next().value!);
  }

  /** Uses up the challenge: true once, for its purpose, person and host, while it lasts. */
  private take(challenge: string, expected: Omit<Challenge, 'expiresAt'>): boolean {
    const found = this.challenges.get(challenge);
    this.challenges.delete(challenge);
    return (
      found !== undefined &&
      found.expiresAt > this.options.clock.now().getTime() &&
      found.purpose === expected.purpose &&
      found.personId === expected.personId &&
      found.rpId === expected.rpId
    );
  }
}
