import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Authorization } from '../src/agent/approval-gate.ts';
import { buildPolicy, type ApprovalPolicy } from '../src/approvals/policy.ts';
import type { LibraryName } from '../src/documents/document-types.ts';
import type { Person, Role } from '../src/people/person.ts';
import { imageUrl } from '../src/store/message-images.ts';
import { upsertFact } from '../src/store/memory-repository.ts';
import { listNotifications } from '../src/store/notifications-repository.ts';
import type { Tool } from '../src/tools/tool.ts';
import { EventSocket } from './support/event-socket.ts';
import { startHearth, type Hearth } from './support/hearth-server.ts';
import { household, type SignedIn } from './support/people.ts';
import { softwarePasskey, type SoftwarePasskey } from './support/software-passkey.ts';
import { readRightsTable, type RightsRow, type Whose } from './support/rights-table.ts';

// docs/protocol.md's *Who may do what*, row by row, against one real server: each role acts on a
// thing of their own and on someone else's, and gets what the table says. A row without a case
// here, or a case without a row, fails the file.

/** A one-pixel PNG, as a message image. */
const pixel = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=';

let hearth: Hearth;
/** Each role signed in through POST /auth/sign-in, as the page does; requests carry their cookie. */
const signedIn = {} as Record<Role, SignedIn>;
const people = {} as Record<Role, Person>;

/** What a case needs: who asks, whose the thing is, and the row's not-found code. */
interface Case {
  caller: Person;
  /** The person whose thing the case acts on: the caller, or someone else. */
  target: Person;
  missing: string;
  request(method: string, url: string, body?: unknown): Promise<{ status: number; body: any }>;
  headers: Record<string, string>;
}

/** The observed answer in the table's words: a status (a 404 or 403 with an unexpected code says so). */
function answer({ status, body }: { status: number; body: any }, missing: string): string {
  const expected = status === 404 ? missing : status === 403 ? 'forbidden' : undefined;
  if (expected === undefined || body?.error?.code === expected) return String(status);
  return `${status} ${body?.error?.code}`;
}

async function session(person: Person, options: { profileId?: string; shared?: boolean } = {}): Promise<string> {
  const { sessions } = hearth.app;
  const created = await sessions.create({ profileId: options.profileId ?? 'smart_home', personId: person.id });
  if (!created.ok) throw new Error(created.message);
  const sessionId = created.session.id;
  await sessions.sendWhenIdle(sessionId, { content: 'Hello' });
  if (options.shared) await sessions.update(sessionId, { shared: true });
  return sessionId;
}

async function schedule(person: Person): Promise<string> {
  const created = await hearth.app.scheduler.create({ name: 'Plants', prompt: 'Water the plants', every: '1d', profile_id: 'smart_home' }, person.id);
  if (!created.ok) throw new Error(created.message);
  return created.value.id;
}

async function notification(person: Person): Promise<number> {
  return (await hearth.deps.notifications.raise({ title: 'Done', body: 'The plants are watered.', personId: person.id })).id;
}

let factCount = 0;

/** A fact of the person's, saved as their memory_save would; answers its id. */
async function fact(person: Person): Promise<number> {
  factCount += 1;
  return (await upsertFact(hearth.deps.db, person.id, { category: 'plants', key: `plant_${factCount}`, value: 'A fern by the window' })).fact.id;
}

async function eventsSocket(context: Case): Promise<EventSocket> {
  const socket = await EventSocket.connect(`${hearth.baseUrl.replace('http', 'ws')}/ws/events`, context.headers);
  await socket.nextMatching((event) => (event.type as string) === 'hello', 'hello');
  return socket;
}

/** Whether `frame` reached the page before a frame every page gets (the events of a socket arrive in order). */
async function reached(socket: EventSocket, frame: (event: any) => boolean): Promise<string> {
  hearth.deps.events.publish({ type: 'profiles_changed', profiles: [] });
  const seen: unknown[] = [];
  await socket.nextMatching((event) => {
    seen.push(event);
    return (event.type as string) === 'profiles_changed';
  }, 'the profiles_changed every page gets');
  socket.close();
  return seen.some(frame) ? 'sent' : 'unsent';
}

const status = (method: string, url: string, body?: unknown) => async (context: Case) => answer(await context.request(method, url, body), context.missing);
const onSession =
  (method: string, path: string, body?: unknown, options: { profileId?: string; shared?: boolean } = {}) =>
  async (context: Case) => {
    const sessionId = await session(context.target, options);
    return answer(await context.request(method, path.replace(':id', sessionId), body), context.missing);
  };
const onSchedule = (method: string, path: string, body?: unknown) => async (context: Case) =>
  answer(await context.request(method, path.replace(':id', await schedule(context.target)), body), context.missing);
const listed = (found: boolean) => (found ? 'listed' : 'unlisted');

let documentCount = 0;

/** A document the person added to their own library (or the household's), once its indexing ended: its id and a word only it holds. */
async function documentOf(person: Person, library: LibraryName = 'mine'): Promise<{ id: string; word: string }> {
  documentCount += 1;
  const word = `fernword${documentCount}x${randomUUID().slice(0, 6)}`;
  const { documents } = hearth.deps;
  const ended = new Set<string>();
  let wake = () => undefined as void;
  const stop = documents.on((event) => {
    if (event.type === 'document_status' && (event.document.status === 'ready' || event.document.status === 'failed')) ended.add(event.document.id);
    wake();
  });
  try {
    const added = await documents.add({ caller: { person, via: 'api_token' }, library, name: `fern-${documentCount}.txt`, content: Buffer.from(`The fern by the window wants water weekly: ${word}.`), source: 'rest' });
    if (!added.ok) throw new Error(`${added.code}: ${added.message}`);
    const { id } = added.document;
    while (!ended.has(id) && documents.get({ person, via: 'api_token' }, id)?.status !== 'ready') await new Promise<void>((resolve) => (wake = resolve));
    return { id, word };
  } finally {
    stop();
  }
}

const onDocument =
  (method: string, path: string, library: LibraryName = 'mine') =>
  async (context: Case) => {
    const { id } = await documentOf(context.target, library);
    return answer(await context.request(method, path.replace(':id', id)), context.missing);
  };
const listedDocument = (library: LibraryName) => async (context: Case) => {
  const { id } = await documentOf(context.target, library);
  const { body } = await context.request('GET', '/documents');
  return listed(body.documents.some((document: { id: string }) => document.id === id));
};
const documentEvent = (library: LibraryName) => async (context: Case) => {
  const socket = await eventsSocket(context);
  const { id } = await documentOf(context.target, library);
  return reached(socket, (event) => event.type === 'document_status' && event.document.id === id);
};

const askEveryCall = buildPolicy({ default: 'ask' }) as ApprovalPolicy;
const knock: Tool = { name: 'knock', description: 'Knocks.', parameters: { type: 'object', properties: {} }, execute: async () => 'knocked' };

/** A call waiting for a decision in a new session of `person` (the gate asked, as their run's call would); `settle` denies it if still waiting, as the owner. */
async function waitingCall(person: Person): Promise<{ sessionId: string; callId: string; authorization: Promise<Authorization>; settle: () => Promise<void> }> {
  const { approvals } = hearth.deps;
  const sessionId = await session(person);
  const callId = `call-${randomUUID()}`;
  const required = new Promise<void>((resolve) => {
    const onRequired = (summary: { call_id: string }) => {
      if (summary.call_id !== callId) return;
      approvals.off('required', onRequired);
      resolve();
    };
    approvals.on('required', onRequired);
  });
  const context = { sessionId, signal: new AbortController().signal, emit: () => undefined, isSubagent: false, sessionProfileId: 'smart_home' };
  const authorization = approvals.authorize({ callId, tool: knock, args: {}, policies: [askEveryCall], context });
  await required;
  const settle = async () => {
    // The owner settles any call but an adult's own, which is theirs alone.
    const decider = approvals.mayDecide(sessionId, callId, people.owner) ? people.owner : person;
    approvals.decide(sessionId, callId, { decision: 'deny', decider, via: 'rest' });
    await authorization;
  };
  return { sessionId, callId, authorization, settle };
}

const decideOver = (asker: (context: Case) => Person) => async (context: Case) => {
  const waiting = await waitingCall(asker(context));
  const answered = answer(await context.request('POST', `/sessions/${waiting.sessionId}/approvals/${waiting.callId}`, { decision: 'allow' }), context.missing);
  await waiting.settle();
  return answered;
};
const listedApproval = (status: 'pending' | 'all') => async (context: Case) => {
  const waiting = await waitingCall(context.target);
  if (status === 'all') await waiting.settle();
  const { body } = await context.request('GET', `/approvals?status=${status}`);
  await waiting.settle();
  return listed(body.approvals.some((approval: any) => approval.call_id === waiting.callId));
};

let madePeople = 0;

/** A request to a public route (outside identify), with no credentials. */
async function postPublic(url: string, body: unknown): Promise<{ status: number; body: any; cookies: string[] }> {
  const response = await fetch(hearth.baseUrl + url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { status: response.status, body: await response.json(), cookies: response.headers.getSetCookie() };
}

/** The server as a browser at http://localhost:<port> reaches it: passkeys are offered only there or over HTTPS. */
const localhostOrigin = () => hearth.baseUrl.replace('127.0.0.1', 'localhost');
async function atLocalhost(url: string, body: unknown, headers: Record<string, string> = {}): Promise<{ status: number; body: any }> {
  const response = await fetch(localhostOrigin() + url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
  const text = await response.text();
  return { status: response.status, body: text === '' ? undefined : JSON.parse(text) };
}

/** A new passkey of the person's, registered through their page. */
async function passkeyOf(person: Person): Promise<SoftwarePasskey> {
  const authenticator = softwarePasskey();
  const headers = signedIn[person.role].cookieHeaders;
  const options = await atLocalhost('/me/passkeys/options', {}, headers);
  const created = await atLocalhost('/me/passkeys', { name: 'a key', credential: authenticator.create(options.body, localhostOrigin()) }, headers);
  expect(created.status).toBe(201);
  return authenticator;
}

/** One case per row of the table, by its route cell. */
const cases: Record<string, (context: Case) => Promise<string>> = {
  'GET /health': status('GET', '/health'),
  'GET /status': status('GET', '/status'),
  'GET /integrations': status('GET', '/integrations'),
  'GET /agents/profiles': async (context) => {
    const { status: answered, body } = await context.request('GET', '/agents/profiles');
    const mayUse = Object.fromEntries(body.profiles.map((profile: any) => [profile.id, profile.may_use]));
    expect(mayUse.server_admin).toBe(context.caller.role === 'owner' || context.caller.role === 'adult');
    expect(mayUse.smart_home).toBe(true);
    return String(answered);
  },
  'GET /agents/tools': status('GET', '/agents/tools'),
  'PUT /agents/tools/:name/enabled an unknown tool': status('PUT', '/agents/tools/no_such_tool/enabled', { enabled: true }),
  'GET /models': status('GET', '/models'),
  'GET /models/loaded': status('GET', '/models/loaded'),
  'POST /models/pull a malformed name': status('POST', '/models/pull', { name: 'not a name!' }),
  'DELETE /models/pulls/:name none running': status('DELETE', `/models/pulls/${encodeURIComponent('no-such:model')}`),
  'DELETE /models/:name an unknown model': status('DELETE', `/models/${encodeURIComponent('no-such:model')}`),
  'PUT /models/default an unknown model': status('PUT', '/models/default', { name: 'no-such:model' }),
  'POST /models/warm': status('POST', '/models/warm', { name: 'fake:latest' }),
  'PATCH /agents/profiles/:id an unknown profile': status('PATCH', '/agents/profiles/no_such_profile', { model: 'fake:latest' }),
  'POST /sessions smart_home': status('POST', '/sessions', { profile_id: 'smart_home' }),
  'POST /sessions server_admin': status('POST', '/sessions', { profile_id: 'server_admin' }),
  'GET /v1/models': status('GET', '/v1/models'),
  'POST /v1/chat/completions smart_home': status('POST', '/v1/chat/completions', { model: 'hearth/smart_home', messages: [{ role: 'user', content: 'Hello' }] }),
  'POST /v1/chat/completions server_admin': status('POST', '/v1/chat/completions', { model: 'hearth/server_admin', messages: [{ role: 'user', content: 'Hello' }] }),
  'GET /sessions': async (context) => {
    const sessionId = await session(context.target);
    const { body } = await context.request('GET', '/sessions');
    return listed(body.some((summary: any) => summary.session_id === sessionId));
  },
  'GET /sessions shared': async (context) => {
    const sessionId = await session(context.target, { shared: true });
    const { body } = await context.request('GET', '/sessions');
    const summary = body.find((each: any) => each.session_id === sessionId);
    if (summary) expect(summary.owner).toEqual({ id: context.target.id, name: context.target.name });
    return listed(summary !== undefined);
  },
  'GET /sessions/:id': onSession('GET', '/sessions/:id'),
  'GET /sessions/:id shared': onSession('GET', '/sessions/:id', undefined, { shared: true }),
  'GET /sessions/:id shared server_admin': onSession('GET', '/sessions/:id', undefined, { shared: true, profileId: 'server_admin' }),
  'GET /sessions/:id/context': onSession('GET', '/sessions/:id/context'),
  'GET /sessions/:id/images/:name': async (context) => {
    const sessionId = await session(context.target);
    const [reference] = await hearth.deps.images.save(sessionId, [pixel]);
    const response = await fetch(hearth.baseUrl + imageUrl(sessionId, reference!), { headers: context.headers });
    if (response.ok) expect(response.headers.get('content-type')).toBe('image/png');
    return answer({ status: response.status, body: response.ok ? undefined : await response.json() }, context.missing);
  },
  'PATCH /sessions/:id': onSession('PATCH', '/sessions/:id', { title: 'Renamed' }),
  'PATCH /sessions/:id shared': onSession('PATCH', '/sessions/:id', { title: 'Renamed' }, { shared: true }),
  'PATCH /sessions/:id server_admin': onSession('PATCH', '/sessions/:id', { profile_id: 'server_admin' }),
  'PATCH /sessions/:id/pin': onSession('PATCH', '/sessions/:id/pin', { pinned: true }),
  'DELETE /sessions/:id': onSession('DELETE', '/sessions/:id'),
  'DELETE /sessions/:id shared': onSession('DELETE', '/sessions/:id', undefined, { shared: true }),
  'POST /sessions/:id/files': async (context) => {
    const sessionId = await session(context.target);
    const form = new FormData();
    form.append('file', new Blob(['a note']), 'note.txt');
    const response = await fetch(`${hearth.baseUrl}/sessions/${sessionId}/files`, { method: 'POST', body: form, headers: context.headers });
    const text = await response.text();
    return answer({ status: response.status, body: text === '' ? undefined : JSON.parse(text) }, context.missing);
  },
  'GET /sessions/:id/files': onSession('GET', '/sessions/:id/files'),
  'DELETE /sessions/:id/files/*': async (context) => {
    const sessionId = await session(context.target);
    await hearth.app.sessions.attachFiles(sessionId, [{ name: 'note.txt', data: Buffer.from('a note') }]);
    return answer(await context.request('DELETE', `/sessions/${sessionId}/files/note.txt`), context.missing);
  },
  'POST /documents': status('POST', '/documents?name=notes.txt', 'Notes about the ferns.'),
  'POST /documents household': async (context) => {
    const form = new FormData();
    form.append('library', 'household');
    form.append('file', new Blob(['The boiler is serviced every October.']), 'boiler.txt');
    const response = await fetch(`${hearth.baseUrl}/documents`, { method: 'POST', headers: context.headers, body: form });
    return answer({ status: response.status, body: await response.json() }, context.missing);
  },
  'GET /documents': listedDocument('mine'),
  'GET /documents household': listedDocument('household'),
  'GET /documents/:id': onDocument('GET', '/documents/:id'),
  'GET /documents/:id/passages': onDocument('GET', '/documents/:id/passages'),
  'GET /documents/:id/file': async (context) => {
    const { id } = await documentOf(context.target);
    const response = await fetch(`${hearth.baseUrl}/documents/${id}/file`, { headers: context.headers });
    const text = await response.text();
    return answer({ status: response.status, body: response.ok ? undefined : JSON.parse(text) }, context.missing);
  },
  'DELETE /documents/:id': onDocument('DELETE', '/documents/:id'),
  'DELETE /documents/:id household': onDocument('DELETE', '/documents/:id', 'household'),
  'GET /documents/search': async (context) => {
    const { id, word } = await documentOf(context.target);
    const { body } = await context.request('GET', `/documents/search?q=${word}`);
    return listed(body.results.some((result: { document_id: string }) => result.document_id === id));
  },
  'PATCH /agents/profiles/:id documents': status('PATCH', '/agents/profiles/smart_home', { documents: false }),
  'POST /sessions/:id/messages': onSession('POST', '/sessions/:id/messages', { content: 'Lights off' }),
  'POST /sessions/:id/messages shared': onSession('POST', '/sessions/:id/messages', { content: 'Lights off' }, { shared: true }),
  'POST /sessions/:id/regenerate': onSession('POST', '/sessions/:id/regenerate'),
  'POST /sessions/:id/messages/:message_id/edit': async (context) => {
    const sessionId = await session(context.target);
    const [asked] = (await hearth.app.sessions.messages(sessionId, 'display')).filter((message) => message.role === 'user');
    return answer(await context.request('POST', `/sessions/${sessionId}/messages/${asked!.id}/edit`, { content: 'Hello again' }), context.missing);
  },
  'POST /sessions/:id/stop': onSession('POST', '/sessions/:id/stop'),
  'POST /sessions/:id/approvals/:call_id': decideOver((context) => context.target),
  "POST /sessions/:id/approvals/:call_id a child's": decideOver(() => people.child),
  'GET /approvals pending': listedApproval('pending'),
  'GET /approvals': listedApproval('all'),
  'WS /ws/sessions/:id approve': async (context) => {
    const waiting = await waitingCall(context.target);
    const socket = await EventSocket.connect(`${hearth.baseUrl.replace('http', 'ws')}/ws/sessions/${waiting.sessionId}`, context.headers);
    const opened = await Promise.race([socket.next('session_sync').then(() => 'open'), socket.closed().then((code) => String(code))]);
    if (opened !== 'open') {
      await waiting.settle();
      return opened;
    }
    socket.send({ type: 'approve', call_id: waiting.callId, decision: 'allow' });
    // The call waits outside a run, so its decision shows as the gate letting it through.
    const told = await Promise.race([
      waiting.authorization.then((authorization) => (authorization.allowed ? 'decided' : JSON.stringify(authorization))),
      socket.nextMatching((event) => event.type === 'error', 'the refusal').then((event) => (event.type === 'error' && event.code === 'forbidden' ? 'refused' : JSON.stringify(event))),
    ]);
    socket.close();
    await waiting.settle();
    return told;
  },
  'WS /ws/events approvals_changed': async (context) => {
    const socket = await eventsSocket(context);
    const waiting = await waitingCall(context.target);
    const answered = await reached(socket, (event) => event.type === 'approvals_changed' && event.pending.some((pending: any) => pending.call_id === waiting.callId));
    await waiting.settle();
    return answered;
  },
  'GET /schedules': async (context) => {
    const scheduleId = await schedule(context.target);
    const { body } = await context.request('GET', '/schedules');
    return listed(body.schedules.some((each: any) => each.id === scheduleId));
  },
  'POST /schedules': status('POST', '/schedules', { name: 'Plants', prompt: 'Water the plants', every: '1d', profile_id: 'smart_home' }),
  'POST /schedules server_admin': status('POST', '/schedules', { name: 'Disks', prompt: 'Check the disks', every: '1d', profile_id: 'server_admin' }),
  'POST /schedules session_id': async (context) => {
    const sessionId = await session(context.target);
    const { status: created, body } = await context.request('POST', '/schedules', { name: 'Plants', prompt: 'Water the plants', every: '1d', profile_id: 'smart_home', session_id: sessionId });
    expect(created).toBe(201);
    return hearth.app.scheduler.get(body.schedule.id)?.sessionId === sessionId ? 'bound' : 'unbound';
  },
  "PATCH /schedules/:id session_id of the caller's": async (context) => {
    const sessionId = await session(context.caller);
    const scheduleId = await schedule(context.target);
    const answered = answer(await context.request('PATCH', `/schedules/${scheduleId}`, { session_id: sessionId }), context.missing);
    if (answered !== '200') return answered;
    return hearth.app.scheduler.get(scheduleId)?.sessionId === sessionId ? 'bound' : 'unbound';
  },
  'POST /schedules/preview': status('POST', '/schedules/preview', { every: '1d' }),
  'PATCH /schedules/:id': onSchedule('PATCH', '/schedules/:id', { name: 'Renamed' }),
  'PATCH /schedules/:id enabled': onSchedule('PATCH', '/schedules/:id', { enabled: false }),
  'DELETE /schedules/:id': onSchedule('DELETE', '/schedules/:id'),
  'POST /schedules/:id/run': async (context) => {
    const scheduleId = await schedule(context.target);
    const answered = answer(await context.request('POST', `/schedules/${scheduleId}/run`), context.missing);
    // The run's session is the schedule's person's, whoever started it.
    if (answered === '202') {
      const sessionId = await waitForScheduleSession(scheduleId);
      expect((await hearth.app.sessions.find(sessionId))?.personId).toBe(context.target.id);
    }
    return answered;
  },
  'GET /schedules/:id/runs': onSchedule('GET', '/schedules/:id/runs'),
  'GET /notifications': async (context) => {
    const id = await notification(context.target);
    const { body } = await context.request('GET', '/notifications');
    return listed(body.notifications.some((each: any) => each.id === id));
  },
  'POST /notifications/:id/read': async (context) => answer(await context.request('POST', `/notifications/${await notification(context.target)}/read`), context.missing),
  'POST /notifications/read-all': async (context) => {
    const id = await notification(context.target);
    expect((await context.request('POST', '/notifications/read-all')).status).toBe(200);
    const unread = await listNotifications(hearth.deps.db, { unreadOnly: true, limit: 1000, personId: context.target.id });
    return listed(!unread.some((each) => each.id === id));
  },
  'GET /memory': async (context) => {
    const id = await fact(context.target);
    const { body } = await context.request('GET', '/memory');
    return listed(body.facts.some((each: any) => each.id === id));
  },
  'PUT /memory/facts': status('PUT', '/memory/facts', { category: 'places', key: 'home_city', value: 'Leipzig' }),
  'DELETE /memory/facts/:id': async (context) => answer(await context.request('DELETE', `/memory/facts/${await fact(context.target)}`), context.missing),
  'POST /auth/sign-in': async (context) => answer(await postPublic('/auth/sign-in', { name: context.caller.name, passphrase: signedIn[context.caller.role].passphrase }), context.missing),
  'POST /auth/sign-out': async (context) => {
    // A second sign-in of the caller's, so the one the other rows use stays.
    const second = await postPublic('/auth/sign-in', { name: context.caller.name, passphrase: signedIn[context.caller.role].passphrase });
    const cookie = second.cookies.find((value) => value.startsWith('hearth_session='))!.split(';')[0]!;
    return answer(await hearth.request('POST', '/auth/sign-out', {}, { cookie }), context.missing);
  },
  'POST /auth/invitations/accept': async (context) => {
    const { code } = await hearth.deps.accounts.invitations.create('guest', people.owner.id);
    return answer(await postPublic('/auth/invitations/accept', { code, name: `${context.caller.role} invited ${++madePeople}`, passphrase: 'passphrase of the invited' }), context.missing);
  },
  'GET /me': status('GET', '/me'),
  'PATCH /me': async (context) => answer(await context.request('PATCH', '/me', { name: context.caller.name }), context.missing),
  'POST /me/tokens': status('POST', '/me/tokens', { name: 'a script' }),
  'GET /me/tokens': async (context) => {
    const { id } = await hearth.deps.accounts.tokens.create(context.target.id, 'listed?');
    const { body } = await context.request('GET', '/me/tokens');
    return listed(body.some((token: any) => token.id === id));
  },
  'DELETE /me/tokens/:id': async (context) => {
    const { id } = await hearth.deps.accounts.tokens.create(context.target.id, 'revoked?');
    return answer(await context.request('DELETE', `/me/tokens/${id}`), context.missing);
  },
  'GET /people': status('GET', '/people'),
  'POST /people': async (context) => answer(await context.request('POST', '/people', { name: `made by ${context.caller.role} ${++madePeople}`, role: 'guest', passphrase: 'passphrase of the made' }), context.missing),
  'GET /people/:id': async (context) => answer(await context.request('GET', `/people/${context.target.id}`), context.missing),
  'PATCH /people/:id': async (context) => answer(await context.request('PATCH', `/people/${context.target.id}`, { name: context.target.name }), context.missing),
  'DELETE /people/:id': async (context) => {
    // Another's: a guest made for the case, so the people the other rows use stay.
    let id = context.caller.id;
    if (context.target.id !== context.caller.id) {
      const made = await hearth.deps.accounts.people.add({ name: `to remove ${++madePeople}`, role: 'guest', passphrase: 'passphrase of the removed' });
      id = made.ok ? made.person.id : '';
    }
    return answer(await context.request('DELETE', `/people/${id}?sessions=delete`), context.missing);
  },
  'POST /people/invitations': status('POST', '/people/invitations', { role: 'adult' }),
  'POST /auth/passkey/options': async (context) => answer(await atLocalhost('/auth/passkey/options', {}), context.missing),
  'POST /auth/passkey': async (context) => {
    const authenticator = await passkeyOf(context.caller);
    const options = await atLocalhost('/auth/passkey/options', {});
    return answer(await atLocalhost('/auth/passkey', { credential: authenticator.get(options.body, localhostOrigin()) }), context.missing);
  },
  'POST /me/passkeys/options': async (context) => answer(await atLocalhost('/me/passkeys/options', {}, context.headers), context.missing),
  'POST /me/passkeys': async (context) => {
    const options = await atLocalhost('/me/passkeys/options', {}, context.headers);
    return answer(await atLocalhost('/me/passkeys', { name: 'a key', credential: softwarePasskey().create(options.body, localhostOrigin()) }, context.headers), context.missing);
  },
  'GET /me/passkeys': async (context) => {
    await passkeyOf(context.target);
    const id = (await hearth.deps.accounts.passkeys.list(context.target.id)).at(-1)!.id;
    const { body } = await context.request('GET', '/me/passkeys');
    return listed(body.some((passkey: any) => passkey.id === id));
  },
  'DELETE /me/passkeys/:id': async (context) => {
    await passkeyOf(context.target);
    const id = (await hearth.deps.accounts.passkeys.list(context.target.id)).at(-1)!.id;
    return answer(await context.request('DELETE', `/me/passkeys/${id}`), context.missing);
  },
  'POST /memory/extract': async (context) => {
    const sessionId = await session(context.target);
    const response = await context.request('POST', '/memory/extract');
    if (response.status !== 200) return answer(response, context.missing);
    const { processed, failed } = response.body as { processed: { session_id: string }[]; failed: { session_id: string }[] };
    return listed([...processed, ...failed].some((entry) => entry.session_id === sessionId));
  },
  'POST /me/telegram/link-code': status('POST', '/me/telegram/link-code'),
  'DELETE /me/telegram': status('DELETE', '/me/telegram'),
  'WS /ws/sessions/:id': async (context) => socketAnswer(context, await session(context.target)),
  'WS /ws/sessions/:id shared server_admin': async (context) => socketAnswer(context, await session(context.target, { shared: true, profileId: 'server_admin' })),
  'WS /ws/events sessions_changed': async (context) => {
    const sessionId = await session(context.target);
    const socket = await eventsSocket(context);
    await hearth.app.sessions.update(sessionId, { title: 'Renamed' });
    return reached(socket, (event) => event.type === 'sessions_changed' && event.session_id === sessionId);
  },
  'WS /ws/events sessions_changed deleted': async (context) => {
    const sessionId = await session(context.target);
    const socket = await eventsSocket(context);
    await hearth.app.sessions.delete(sessionId);
    return reached(socket, (event) => event.type === 'sessions_changed' && event.session_id === sessionId && event.change === 'deleted');
  },
  'WS /ws/events notification': async (context) => {
    const socket = await eventsSocket(context);
    const id = await notification(context.target);
    return reached(socket, (event) => event.type === 'notification' && event.id === id);
  },
  'WS /ws/events document_status': documentEvent('mine'),
  'WS /ws/events document_status household': documentEvent('household'),
  'WS /ws/events hello unread_notifications': async (context) => {
    const before = await hearth.deps.notifications.unreadCount(context.caller.id);
    await notification(context.target);
    const socket = await EventSocket.connect(`${hearth.baseUrl.replace('http', 'ws')}/ws/events`, context.headers);
    const hello = (await socket.nextMatching((event) => (event.type as string) === 'hello', 'hello')) as unknown as { unread_notifications: number };
    socket.close();
    return listed(hello.unread_notifications === before + 1);
  },
};

async function socketAnswer(context: Case, sessionId: string): Promise<string> {
  const socket = await EventSocket.connect(`${hearth.baseUrl.replace('http', 'ws')}/ws/sessions/${sessionId}`, context.headers);
  const opened = await Promise.race([socket.next('session_sync').then(() => 'open'), socket.closed().then((code) => String(code))]);
  socket.close();
  return opened;
}

async function waitForScheduleSession(scheduleId: string): Promise<string> {
  for (;;) {
    const sessionId = hearth.app.scheduler.get(scheduleId)?.sessionId;
    if (sessionId) return sessionId;
    await new Promise((resolve) => hearth.app.scheduler.once('run_finished', resolve));
  }
}

const table = await readRightsTable();

beforeAll(async () => {
  hearth = await startHearth();
  hearth.llm.respondWith(() => ({ content: 'Done.' }));
  const { owner, people: [adult, child, guest] } = await household(hearth, ['adult', 'child', 'guest'] as const);
  Object.assign(signedIn, { owner, adult, child, guest });
  for (const role of ['owner', 'adult', 'child', 'guest'] as const) people[role] = signedIn[role].person;
});
afterAll(async () => {
  await hearth?.close();
});

describe('docs/protocol.md: who may do what', () => {
  it('has a case for every row and a row for every case', () => {
    expect(table.map((row) => row.route).sort()).toEqual(Object.keys(cases).sort());
  });

  it('refuses a request that names nobody', async () => {
    // Once the household is more than one person, loopback alone proves nothing.
    expect((await hearth.request('GET', '/sessions')).status).toBe(401);
  });

  describe.each(table.map((row) => [row.route, row] as [string, RightsRow]))('%s', (_route, row) => {
    const checks = (['owner', 'adult', 'child', 'guest'] as const).flatMap((role) =>
      (['own', 'another'] as Whose[]).flatMap((whose) => (row.answers[role][whose] === undefined ? [] : [[role, whose, row.answers[role][whose]!] as const])),
    );
    it.each(checks)('%s, %s → %s', async (role, whose, expected) => {
      const caller = people[role];
      const target = whose === 'own' ? caller : role === 'owner' ? people.adult : people.owner;
      const headers = signedIn[role].cookieHeaders;
      const context: Case = {
        caller,
        target,
        missing: row.missing,
        headers,
        request: (method, url, body) => hearth.request(method, url, body, headers),
      };
      const run = cases[row.route];
      if (!run) throw new Error(`no case for the row ${row.route}`);
      expect(await run(context)).toBe(expected);
    });
  });
});
