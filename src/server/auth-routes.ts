import { Type, type Static } from '@sinclair/typebox';
import type { AuthenticationResponseJSON } from '@simplewebauthn/server';
import type { FastifyInstance } from 'fastify';
import type { Accounts } from '../household/accounts.ts';
import { passphraseLength } from '../household/passphrase.ts';
import { ApiError } from '../errors.ts';
import { clientAddress } from './client-address.ts';
import { readCookie, signInCookie } from './identify.ts';
import { personJson } from './person-json.ts';
import { relyingParty } from './relying-party.ts';
import { clearSignInCookie, setSignInCookie } from './sign-in-cookie.ts';

const SignInBody = Type.Object(
  { name: Type.String({ minLength: 1, maxLength: 100 }), passphrase: Type.String({ minLength: 1, maxLength: passphraseLength.max }) },
  { additionalProperties: false },
);
const AcceptBody = Type.Object(
  {
    code: Type.String({ minLength: 1, maxLength: 200 }),
    name: Type.String({ minLength: 1, maxLength: 100, pattern: '\\S' }),
    passphrase: Type.String({ minLength: passphraseLength.min, maxLength: passphraseLength.max }),
  },
  { additionalProperties: false },
);
/** A WebAuthn answer as the browser's JSON form of it; @simplewebauthn/server checks its shape. */
const Credential = Type.Object({ id: Type.String({ minLength: 1, maxLength: 1024 }), type: Type.Literal('public-key') }, { additionalProperties: true });
const PasskeySignInBody = Type.Object({ credential: Credential }, { additionalProperties: false });
const SignOutBody = Type.Union([Type.Object({ everywhere: Type.Optional(Type.Boolean()) }, { additionalProperties: false }), Type.Null()]);

/** The routes anyone may call, outside identify(): signing in (by passphrase or passkey) and out, accepting an invitation (docs/people.md). */
export async function authRoutes(app: FastifyInstance, options: { accounts: Accounts }) {
  const { accounts } = options;

  app.post<{ Body: Static<typeof SignInBody> }>('/auth/sign-in', { schema: { body: SignInBody } }, async (request, reply) => {
    const result = await accounts.signIns.signIn(request.body.name, request.body.passphrase, clientAddress(request));
    if (!result.ok) throw new ApiError('sign_in_failed', 'That name and passphrase do not match anyone here. After a few failures each attempt waits longer.');
    setSignInCookie(request, reply, result.secret);
    const { id, name, role } = result.person;
    return { id, name, role };
  });

  app.post<{ Body: Static<typeof SignOutBody> }>('/auth/sign-out', { schema: { body: SignOutBody } }, async (request, reply) => {
    const secret = readCookie(request.headers.cookie, signInCookie);
    const ended = secret === undefined ? 0 : await accounts.signIns.signOut(secret, request.body?.everywhere === true);
    clearSignInCookie(request, reply);
    return { ended };
  });

  app.post<{ Body: Static<typeof AcceptBody> }>('/auth/invitations/accept', { schema: { body: AcceptBody } }, async (request, reply) => {
    const { code, name, passphrase } = request.body;
    const result = await accounts.invitations.accept(code, name, passphrase);
    if (!result.ok) {
      request.log.warn({ name, address: clientAddress(request) }, `invitation refused: ${result.code}`);
      throw new ApiError(result.code, result.message);
    }
    request.log.info({ person: result.person.name, role: result.person.role }, 'joined the household');
    setSignInCookie(request, reply, await accounts.signIns.start(result.person.id, clientAddress(request)));
    return reply.code(201).send(personJson(result.person));
  });

  app.post('/auth/passkey/options', async (request) => accounts.passkeys.signInOptions(relyingParty(request)));

  app.post<{ Body: Static<typeof PasskeySignInBody> }>('/auth/passkey', { schema: { body: PasskeySignInBody } }, async (request, reply) => {
    const rp = relyingParty(request);
    const result = await accounts.passkeys.signIn(request.body.credential as unknown as AuthenticationResponseJSON, rp, clientAddress(request));
    if (!result.ok) throw new ApiError(result.code, result.message);
    setSignInCookie(request, reply, await accounts.signIns.start(result.person.id, clientAddress(request)));
    const { id, name, role } = result.person;
    return { id, name, role };
  });
}
