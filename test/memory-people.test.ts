import { describe, expect, it } from 'vitest';
import { useHearth, type Hearth } from './support/hearth-server.ts';
import { household, type SignedIn } from './support/people.ts';
import type { RecordedRequest } from './support/scripted-llm.ts';
import { waitUntil } from './support/wait-until.ts';

// Each memory route through the real server with two people signed in: each reaches only their
// own facts and summary (another's fact answers like a missing one), and a guest keeps none.
// The rules themselves are checked in memory: test/internals/memory-of-people.test.ts.

const startHearth = useHearth();

const isExtraction = (request: RecordedRequest) => request.body?.format !== undefined;
const isSummary = (request: RecordedRequest) => String(request.body?.messages?.[0]?.content ?? '').includes('memory note');
const lastMessage = (request: RecordedRequest) => String(request.body?.messages?.at(-1)?.content ?? '');

/** Extraction finds "I live in X" in the conversation; a summary repeats the facts it was given; chat answers "Noted.". */
async function start(): Promise<Hearth> {
  const server = await startHearth();
  server.llm.respondWith((request) => {
    if (isExtraction(request)) {
      const facts = [...lastMessage(request).matchAll(/I live in (\w+)/g)].map((match) => ({ category: 'places', key: 'home_city', value: match[1] }));
      return { content: JSON.stringify({ facts }) };
    }
    if (isSummary(request)) return { content: `Summary of ${lastMessage(request).replace('Facts:\n', '')}` };
    return { content: 'Noted.' };
  });
  return server;
}

async function save(person: SignedIn, value: string): Promise<number> {
  const { status, body } = await person.request('PUT', '/memory/facts', { category: 'places', key: 'home_city', value });
  expect(status).toBe(200);
  return body.id as number;
}

const values = async (person: SignedIn) => ((await person.request('GET', '/memory')).body.facts as { value: string }[]).map((fact) => fact.value);

describe('the memory routes in a household', () => {
  it("GET /memory answers the caller's facts and summary only", async () => {
    const server = await start();
    const { owner, people: [adult] } = await household(server, ['adult']);
    await save(owner, 'Leipzig');
    await save(adult, 'Halle');
    await waitUntil(async () => (await owner.request('GET', '/memory')).body.summary !== null && (await adult.request('GET', '/memory')).body.summary !== null);

    expect((await owner.request('GET', '/memory')).body).toEqual({
      summary: 'Summary of - places / home_city: Leipzig',
      facts: [{ id: 1, category: 'places', key: 'home_city', value: 'Leipzig', created_at: expect.any(String), updated_at: expect.any(String) }],
    });
    expect((await adult.request('GET', '/memory', undefined, adult.tokenHeaders)).body).toEqual({
      summary: 'Summary of - places / home_city: Halle',
      facts: [{ id: 2, category: 'places', key: 'home_city', value: 'Halle', created_at: expect.any(String), updated_at: expect.any(String) }],
    });
  });

  it("PUT /memory/facts saves the caller's fact beside another's of the same key, and a guest's is refused", async () => {
    const server = await start();
    const { owner, people: [adult, guest] } = await household(server, ['adult', 'guest']);
    const owners = await save(owner, 'Leipzig');
    const adults = await save(adult, 'Halle');
    expect(adults).not.toBe(owners);
    expect(await save(adult, 'Dresden')).toBe(adults);
    expect(await values(owner)).toEqual(['Leipzig']);
    expect(await values(adult)).toEqual(['Dresden']);

    expect(await guest.request('PUT', '/memory/facts', { category: 'places', key: 'home_city', value: 'Prague' })).toEqual({
      status: 403,
      body: { error: { code: 'forbidden', message: 'Guests keep no long-term memory; the owner, adults and children do.' } },
    });
    expect((await guest.request('GET', '/memory')).body).toEqual({ summary: null, facts: [] });
  });

  it("DELETE /memory/facts/:id answers another's fact like a missing one, and leaves it", async () => {
    const server = await start();
    const { owner, people: [adult] } = await household(server, ['adult']);
    const owners = await save(owner, 'Leipzig');
    const adults = await save(adult, 'Halle');

    const missing = { status: 404, body: { error: { code: 'not_found', message: `No remembered fact with id ${adults}.` } } };
    expect(await owner.request('DELETE', `/memory/facts/${adults}`)).toEqual(missing);
    expect(await values(adult)).toEqual(['Halle']);
    expect(await adult.request('DELETE', `/memory/facts/${adults}`)).toEqual({ status: 204, body: undefined });
    expect(await owner.request('DELETE', `/memory/facts/${adults}`)).toEqual(missing);
    expect(await values(owner)).toEqual(['Leipzig']);
    expect((await owner.request('DELETE', `/memory/facts/${owners}`)).status).toBe(204);
  });

  it("POST /memory/extract reads the caller's sessions and tells of theirs only; facts go to whose session it was; a guest's is refused", async () => {
    const server = await start();
    const { owner, people: [adult, guest] } = await household(server, ['adult', 'guest']);
    const say = async (person: SignedIn, content: string, profileId?: string) => {
      const sessionId = await person.createSession(profileId);
      expect((await person.request('POST', `/sessions/${sessionId}/messages`, { content })).status).toBe(200);
      return sessionId;
    };
    const owners = await say(owner, 'I live in Leipzig.');
    const adults = await say(adult, 'I live in Halle.');
    await say(guest, 'I live in Prague.', 'smart_home');

    expect((await owner.request('POST', '/memory/extract')).body).toEqual({ processed: [{ session_id: owners, facts_changed: 1 }], failed: [], summary_updated: true });
    expect((await adult.request('POST', '/memory/extract')).body).toEqual({ processed: [{ session_id: adults, facts_changed: 1 }], failed: [], summary_updated: true });
    expect((await guest.request('POST', '/memory/extract')).status).toBe(403);
    expect(await values(owner)).toEqual(['Leipzig']);
    expect(await values(adult)).toEqual(['Halle']);
    const extracted = server.llm.requests.filter(isExtraction).map(lastMessage);
    expect(extracted).toHaveLength(2);
    expect(extracted.join('\n')).not.toContain('Prague');
  });
});
