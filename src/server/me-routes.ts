import { Type, type Static } from '@sinclair/typebox';
import type { RegistrationResponseJSON } from '@simplewebauthn/server';
import type { FastifyInstance } from 'fastify';
import type { Accounts } from '../household/accounts.ts';
import type { StoredPasskey } from '../household/passkeys.ts';
import { passphraseLength } from '../household/passphrase.ts';
import { ApiError } from '../errors.ts';
import { clientAddress } from './client-address.ts';
import { personJson } from './person-json.ts';
import { relyingParty } from './relying-party.ts';
import { setSignInCookie } from './sign-in-cookie.ts';

const Name = Type.String({ minLength: 1, maxLength: 100, pattern: '\\S' });
const Passphrase = Type.String({ minLength: passphraseLength.min, maxLength: passphraseLength.max });
const MeChanges = Type.Object(
  { name: Type.Optional(Name), passphrase: Type.Optional(Passphrase), current_passphrase: Type.Optional(Type.String({ maxLength: passphraseLength.max })) },
  { additionalProperties: false, minProperties: 1 },
);
const TokenBody = Type.Object({ name: Name }, { additionalProperties: false });
const TokenParams = Type.Object({ id: Type.String() });
/** A WebAuthn answer as the browser's JSON form of it; @simplewebauthn/server checks its shape. */
const Credential = Type.Object({ id: Type.String({ minLength: 1, maxLength: 1024 }), type: Type.Literal('public-key') }, { additionalProperties: true });
const PasskeyBody = Type.Object({ name: Name, credential: Credential }, { additionalProperties: false });
const PasskeyParams = Type.Object({ id: Type.String() });

/** The caller's own account: who they are, their name and passphrase, their personal API tokens and passkeys (docs/people.md). */
export async function meRoutes(app: FastifyInstance, options: { accounts: Accounts }) {
  const { accounts } = options;

  app.get('/me', async (request) => ({ ...personJson(request.caller.person), via: request.caller.via }));

  app.patch<{ Body: Static<typeof MeChanges> }>('/me', { schema: { body: MeChanges } }, async (request, reply) => {
    const { name, passphrase, current_passphrase: currentPassphrase } = request.body;
    const result = await accounts.people.updateOwn(request.caller.person, {
      ...(name !== undefined && { name }),
      ...(passphrase !== undefined && { passphrase }),
      ...(currentPassphrase !== undefined && { currentPassphrase }),
    });
    if (!result.ok) throw new ApiError(result.code, result.message);
    // A new passphrase ended every sign-in of theirs; this page stays signed in with a fresh one.
    // It is also how the owner a one-person Hearth starts with gets a sign-in before anyone joins.
    if (passphrase !== undefined) setSignInCookie(request, reply, await accounts.signIns.start(result.person.id, clientAddress(request)));
    return personJson(result.person);
  });

  app.post<{ Body: Static<typeof TokenBody> }>('/me/tokens', { schema: { body: TokenBody } }, async (request, reply) => {
    // A guest is a kiosk's visitor: a token would keep them in from anywhere, after they left.
    if (request.caller.person.role === 'guest') throw new ApiError('forbidden', 'A guest cannot make personal API tokens; the owner, adults and children can.');
    const created = await accounts.tokens.create(request.caller.person.id, request.body.name.trim());
    return reply.code(201).send({ id: created.id, name: created.name, token: created.token, created_at: created.createdAt });
  });

  app.get('/me/tokens', async (request) =>
    (await accounts.tokens.list(request.caller.person.id)).map((token) => ({ id: token.id, name: token.name, created_at: token.createdAt, last_used_at: token.lastUsedAt })),
  );

  app.delete<{ Params: Static<typeof TokenParams> }>('/me/tokens/:id', { schema: { params: TokenParams } }, async (request, reply) => {
    if (!(await accounts.tokens.revoke(request.caller.person.id, request.params.id))) throw new ApiError('token_not_found', `You have no token with id ${request.params.id}.`);
    return reply.code(204).send();
  });

  app.post('/me/passkeys/options', async (request) => accounts.passkeys.registrationOptions(request.caller.person, relyingParty(request)));

  app.post<{ Body: Static<typeof PasskeyBody> }>('/me/passkeys', { schema: { body: PasskeyBody } }, async (request, reply) => {
    const { name, credential } = request.body;
    const result = await accounts.passkeys.register(request.caller.person, credential as unknown as RegistrationResponseJSON, relyingParty(request), name.trim());
    if (!result.ok) throw new ApiError(result.code, result.message);
    return reply.code(201).send(passkeyJson(result.passkey));
  });

  app.get('/me/passkeys', async (request) => (await accounts.passkeys.list(request.caller.person.id)).map(passkeyJson));

  app.delete<{ Params: Static<typeof PasskeyParams> }>('/me/passkeys/:id', { schema: { params: PasskeyParams } }, async (request, reply) => {
    if (!(await accounts.passkeys.remove(request.caller.person.id, request.params.id))) throw new ApiError('passkey_not_found', `You have no passkey with id ${request.params.id}.`);
    return reply.code(204).send();
  });
}

function passkeyJson(passkey: StoredPasskey) {
  return { id: passkey.id, name: passkey.name, created_at: passkey.createdAt, last_used_at: passkey.lastUsedAt };
}
