import type { Person, Role } from '../../src/people/person.ts';
import { signInCookie } from '../../src/server/identify.ts';
import { EventSocket } from './event-socket.ts';
import type { Hearth } from './hearth-server.ts';

/** Someone of the household, signed in on a started Hearth: requests and sockets go as them. */
export interface SignedIn {
  person: Person;
  passphrase: string;
  /** The sign-in cookie's value, as the browser would hold it. */
  session: string;
  /** A personal API token of theirs. */
  token: string;
  /** `cookie: hearth_session=…` */
  cookieHeaders: Record<string, string>;
  /** `authorization: Bearer <personal token>` */
  tokenHeaders: Record<string, string>;
  /** `hearth.request` with their cookie (or `headers` given instead). */
  request(method: string, url: string, body?: unknown, headers?: Record<string, string>): Promise<{ status: number; body: any }>;
  /** A session's socket with their cookie. */
  connect(sessionId: string, query?: string): Promise<EventSocket>;
  /** The events socket (/ws/events) with their cookie. */
  events(query?: string): Promise<EventSocket>;
  /** Creates a session as them; returns its id. */
  createSession(profileId?: string): Promise<string>;
}

let counter = 0;

/**
 * Adds a person with this role (through the household service, as POST /people does), signs them
 * in through POST /auth/sign-in and makes them a personal token. The Hearth starts as one person
 * (its owner, free on loopback); once this adds a second, the owner needs `signInOwner` too.
 */
export async function addPerson(hearth: Hearth, options: { role: Role; name?: string; passphrase?: string }): Promise<SignedIn> {
  counter += 1;
  const name = options.name ?? `${options.role} ${counter}`;
  const passphrase = options.passphrase ?? `passphrase of ${name}`;
  const added = await hearth.deps.accounts.people.add({ name, role: options.role, passphrase });
  if (!added.ok) throw new Error(`addPerson: ${added.code} ${added.message}`);
  return signIn(hearth, added.person, passphrase);
}

/** Gives the owner Hearth starts with a passphrase (as PATCH /me does) and signs them in. */
export async function signInOwner(hearth: Hearth, passphrase = 'passphrase of the owner'): Promise<SignedIn> {
  const owner = await hearth.deps.household.firstOwner();
  const changed = await hearth.deps.accounts.people.update(owner.id, { passphrase });
  if (!changed.ok) throw new Error(`signInOwner: ${changed.code} ${changed.message}`);
  return signIn(hearth, changed.person, passphrase);
}

/** A household: the owner signed in and one person of each role asked for, each signed in. */
export async function household<const R extends readonly Role[]>(hearth: Hearth, roles: R): Promise<{ owner: SignedIn; people: { [K in keyof R]: SignedIn } }> {
  const owner = await signInOwner(hearth);
  const people = [];
  for (const role of roles) people.push(await addPerson(hearth, { role }));
  return { owner, people: people as { [K in keyof R]: SignedIn } };
}

async function signIn(hearth: Hearth, person: Person, passphrase: string): Promise<SignedIn> {
  const response = await fetch(`${hearth.baseUrl}/auth/sign-in`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ name: person.name, passphrase }),
  });
  if (response.status !== 200) throw new Error(`sign in as ${person.name}: ${response.status} ${await response.text()}`);
  const session = sessionFrom(response.headers.getSetCookie());
  const { token } = await hearth.deps.accounts.tokens.create(person.id, 'tests');
  const cookieHeaders = { cookie: `${signInCookie}=${session}` };
  const request: SignedIn['request'] = (method, url, body, headers = cookieHeaders) => hearth.request(method, url, body, headers);
  return {
    person,
    passphrase,
    session,
    token,
    cookieHeaders,
    tokenHeaders: { authorization: `Bearer ${token}` },
    request,
    connect: (sessionId, query = '') => hearth.connect(sessionId, query, cookieHeaders),
    events: (query = '') => EventSocket.connect(`${hearth.baseUrl.replace('http', 'ws')}/ws/events${query}`, cookieHeaders),
    async createSession(profileId) {
      const { status, body } = await request('POST', '/sessions', profileId ? { profile_id: profileId } : {});
      if (status !== 201) throw new Error(`create session as ${person.name}: ${status} ${JSON.stringify(body)}`);
      return body.session_id as string;
    },
  };
}

/** The sign-in cookie's value among a response's Set-Cookie headers. */
export function sessionFrom(setCookies: string[]): string {
  const prefix = `${signInCookie}=`;
  const header = setCookies.find((value) => value.startsWith(prefix));
  if (!header) throw new Error(`no ${signInCookie} cookie in ${JSON.stringify(setCookies)}`);
  return decodeURIComponent(header.slice(prefix.length).split(';')[0]!);
}
