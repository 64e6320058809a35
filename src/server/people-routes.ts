import { Type, type Static } from '@sinclair/typebox';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { DocumentLibrary } from '../documents/document-types.ts';
import type { Accounts } from '../household/accounts.ts';
import type { Household } from '../household/household.ts';
import { passphraseLength } from '../household/passphrase.ts';
import { ApiError } from '../errors.ts';
import { roles } from '../people/person.ts';
import { managesHousehold } from '../people/rights.ts';
import type { Scheduler } from '../scheduler/scheduler.ts';
import type { Sessions } from '../sessions/sessions.ts';
import type { Db } from '../store/database.ts';
import { listSchedules } from '../store/schedules-repository.ts';
import { personJson } from './person-json.ts';
import { cameOverHttps } from './sign-in-cookie.ts';

const Role = Type.Union(roles.map((role) => Type.Literal(role)));
const Name = Type.String({ minLength: 1, maxLength: 100, pattern: '\\S' });
const Passphrase = Type.String({ minLength: passphraseLength.min, maxLength: passphraseLength.max });
const NewPerson = Type.Object({ name: Name, role: Role, passphrase: Passphrase }, { additionalProperties: false });
const PersonChanges = Type.Object(
  { name: Type.Optional(Name), role: Type.Optional(Role), passphrase: Type.Optional(Passphrase) },
  { additionalProperties: false, minProperties: 1 },
);
const PersonParams = Type.Object({ id: Type.String() });
const RemoveQuery = Type.Object({ sessions: Type.Optional(Type.Union([Type.Literal('delete'), Type.Literal('give_to_owner')])) }, { additionalProperties: false });
const NewInvitation = Type.Object({ role: Role }, { additionalProperties: false });

export interface PeopleRoutesOptions {
  accounts: Accounts;
  household: Household;
  sessions: Sessions;
  scheduler: Scheduler;
  db: Db;
  /** A person's own documents go with them (the household's they added stay). */
  documents: Pick<DocumentLibrary, 'list' | 'delete'>;
}

/** The owner's management of the household: people, their roles and passphrases, invitations (docs/people.md). */
export async function peopleRoutes(app: FastifyInstance, options: PeopleRoutesOptions) {
  const { accounts, household, sessions, scheduler, db, documents } = options;

  app.addHook('onRequest', async (request) => {
    if (!managesHousehold(request.caller.person)) throw new ApiError('forbidden', 'Only an owner manages the people of this Hearth.');
  });

  app.get('/people', async () => (await household.people()).map(personJson));

  app.post<{ Body: Static<typeof NewPerson> }>('/people', { schema: { body: NewPerson } }, async (request, reply) => {
    await mustHavePassphrase(request);
    const result = await accounts.people.add(request.body);
    if (!result.ok) throw new ApiError(result.code, result.message);
    request.log.info({ person: result.person.name, role: result.person.role, by: request.caller.person.name }, 'person added');
    return reply.code(201).send(personJson(result.person));
  });

  app.get<{ Params: Static<typeof PersonParams> }>('/people/:id', { schema: { params: PersonParams } }, async (request) => {
    const person = await household.person(request.params.id);
    if (!person) throw new ApiError('person_not_found', `No person with id ${request.params.id}.`);
    return personJson(person);
  });

  app.patch<{ Params: Static<typeof PersonParams>; Body: Static<typeof PersonChanges> }>(
    '/people/:id',
    { schema: { params: PersonParams, body: PersonChanges } },
    async (request) => {
      const result = await accounts.people.update(request.params.id, request.body);
      if (!result.ok) throw new ApiError(result.code, result.message);
      return personJson(result.person);
    },
  );

  app.delete<{ Params: Static<typeof PersonParams>; Querystring: Static<typeof RemoveQuery> }>(
    '/people/:id',
    { schema: { params: PersonParams, querystring: RemoveQuery } },
    async (request, reply) => {
      const fate = request.query.sessions;
      const removal = await accounts.people.removeSettling(request.params.id, async (person, heir) => {
        if (fate === undefined) {
          throw new ApiError('invalid_request', `Say what becomes of ${person.name}'s sessions: ?sessions=delete, or ?sessions=give_to_owner (to ${heir.name}).`);
        }
        // A schedule acts for its person: it goes with them rather than running on as someone else.
        for (const schedule of await listSchedules(db)) if (schedule.personId === person.id) await scheduler.remove(schedule.id);
        const leaving = { person, via: request.caller.via };
        for (const document of documents.list(leaving)) if (document.owner_person_id === person.id) await documents.delete(leaving, document.id);
        if (fate === 'delete') {
          await sessions.deleteAllOf(person.id);
        } else {
          for (const id of await accounts.people.giveSessions(person.id, heir)) sessions.announce(id, 'updated');
        }
      });
      if (!removal.ok) throw new ApiError(removal.code, removal.message);
      request.log.info({ person: removal.person.name, sessions: fate, by: request.caller.person.name }, 'person removed');
      return reply.code(204).send();
    },
  );

  app.post<{ Body: Static<typeof NewInvitation> }>('/people/invitations', { schema: { body: NewInvitation } }, async (request, reply) => {
    await mustHavePassphrase(request);
    const { code, expiresAt } = await accounts.invitations.create(request.body.role, request.caller.person.id);
    // In the fragment, so the code never reaches a server's or a proxy's request log.
    const url = `${cameOverHttps(request) ? 'https' : 'http'}://${request.headers.host ?? 'localhost'}/#invitation=${encodeURIComponent(code)}`;
    return reply.code(201).send({ code, url, expires_at: expiresAt });
  });
}

/**
 * A second person ends the one-person path (loopback alone no longer signs the owner in), so the
 * owner chooses a passphrase first (PATCH /me) and can still sign in afterwards.
 */
async function mustHavePassphrase(request: FastifyRequest): Promise<void> {
  const { person, via } = request.caller;
  if (!person.hasPassphrase && via !== 'auth_token') {
    throw new ApiError('passphrase_needed', 'Choose your own passphrase first (PATCH /me {"passphrase": …}): once someone else joins, you sign in with it.');
  }
}
