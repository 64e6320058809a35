import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import type { AppDependencies } from '../src/app-dependencies.ts';
import { factsSchema } from '../src/memory/extraction.ts';
import type { MemoryService } from '../src/memory/memory-service.ts';
import { startHearth, type Hearth, useHearth } from './support/hearth-server.ts';
import type { RecordedRequest, ScriptStep } from './support/scripted-llm.ts';
import { waitUntil } from './support/wait-until.ts';

const startApp = useHearth();

async function start(options: Parameters<typeof startHearth>[0] = {}): Promise<Hearth> {
  return startApp(options);
}

function memoryOf(server: Hearth): MemoryService {
  return (server.deps as AppDependencies).memory;
}

const isExtraction = (request: RecordedRequest) => request.body?.format !== undefined || request.body?.response_format !== undefined;
const isSummary = (request: RecordedRequest) => String(request.body?.messages?.[0]?.content ?? '').includes('memory note');
const chatRequests = (server: Hearth) => server.llm.requests.filter((request) => !isExtraction(request) && !isSummary(request));
const extractionRequests = (server: Hearth) => server.llm.requests.filter(isExtraction);
const summaryRequests = (server: Hearth) => server.llm.requests.filter(isSummary);

interface Script {
  /** The extraction reply: facts, or raw text. */
  extraction?: () => { category: string; key: string; value: string }[] | string;
  summary?: string;
  /** Answers the agent's own calls; `index` counts only those. */
  chat?: (request: RecordedRequest, index: number) => ScriptStep;
}

/** Answers extraction, summary and agent requests, recognised by their shape. */
function answer(server: Hearth, script: Script): void {
  server.llm.respondWith((request) => {
    if (isExtraction(request)) {
      const reply = script.extraction?.() ?? [];
      return { content: typeof reply === 'string' ? reply : JSON.stringify({ facts: reply }) };
    }
    if (isSummary(request)) return { content: script.summary ?? 'The user is known.' };
    return script.chat?.(request, chatRequests(server).length - 1) ?? { content: 'Noted.' };
  });
}

async function say(server: Hearth, sessionId: string, content: string): Promise<void> {
  const { status, body } = await server.request('POST', `/sessions/${sessionId}/messages`, { content });
  if (status !== 200) throw new Error(`message: ${status} ${JSON.stringify(body)}`);
}

/** Makes a session look idle for `minutes` by moving its last activity back in the SQLite file. */
function makeIdle(server: Hearth, sessionId: string, minutes: number): void {
  const db = new Database(server.config.DB_PATH);
  try {
    db.prepare('update sessions set last_active = ? where id = ?').run(new Date(Date.now() - minutes * 60_000).toISOString(), sessionId);
  } finally {
    db.close();
  }
}

const leipzigFacts = [
  { category: 'places', key: 'home_city', value: 'Leipzig' },
  { category: 'environment', key: 'nas_address', value: 'Synology at 192.168.1.20' },
];
const leipzigSummary = 'The user lives in Leipzig and keeps a Synology NAS at 192.168.1.20.';

describe('long-term memory extraction', () => {
  it('extracts facts from an idle session when a session is created, and a new session hears the summary', async () => {
    const server = await start({ env: { MEMORY_IDLE_MINUTES: '1' } });
    answer(server, { extraction: () => leipzigFacts, summary: leipzigSummary });
    const old = await server.createSession();
    await say(server, old, 'I live in Leipzig. My NAS is a Synology at 192.168.1.20.');

    // Not idle yet: creating a session starts a run that skips it.
    await server.createSession();
    expect(await memoryOf(server).runExtraction()).toEqual({ processed: [], failed: [], summariesUpdated: [] });
    expect(extractionRequests(server)).toEqual([]);

    makeIdle(server, old, 2);
    const fresh = await server.createSession();
    const memory = await waitUntil(async () => {
      const { body } = await server.request('GET', '/memory');
      return body.summary !== null && body;
    });
    expect(memory.summary).toBe(leipzigSummary);
    expect(memory.facts).toEqual([
      { id: 2, category: 'environment', key: 'nas_address', value: 'Synology at 192.168.1.20', created_at: expect.any(String), updated_at: expect.any(String) },
      { id: 1, category: 'places', key: 'home_city', value: 'Leipzig', created_at: expect.any(String), updated_at: expect.any(String) },
    ]);

    // One structured-output call with the conversation, then one plain call for the summary.
    const [extraction, ...moreExtractions] = extractionRequests(server);
    expect(moreExtractions).toEqual([]);
    expect(extraction!.body.format).toEqual(factsSchema);
    expect(extraction!.body.think).toBe(false);
    expect(extraction!.body.options.temperature).toBeLessThanOrEqual(0.2);
    expect(extraction!.body.messages[1].content).toContain('User: I live in Leipzig. My NAS is a Synology at 192.168.1.20.');
    expect(extraction!.body.messages[1].content).toContain('Assistant: Noted.');
    const [summary] = summaryRequests(server);
    expect(summary!.body.format).toBeUndefined();
    expect(summary!.body.messages[1].content).toContain('- places / home_city: Leipzig');

    await say(server, fresh, 'Where do I live?');
    const messages = chatRequests(server).at(-1)!.body.messages;
    expect(messages[0].role).toBe('system');
    expect(messages[1]).toEqual({ role: 'system', content: `## What I remember about the user\n\n${leipzigSummary}` });
    expect(messages[2]).toMatchObject({ role: 'user', content: 'Where do I live?' });

    // The old session is not read again; the new one waits until it is idle.
    expect((await memoryOf(server).runExtraction()).processed).toEqual([]);
    expect(extractionRequests(server)).toHaveLength(1);
  });

  it('a malformed extraction reply changes nothing, and the session is retried on the next run', async () => {
    const server = await start();
    let reply: () => ReturnType<NonNullable<Script['extraction']>> = () => 'Sure! The user likes green tea.';
    answer(server, { extraction: () => reply(), summary: 'The user drinks green tea every morning.' });
    const session = await server.createSession();
    await say(server, session, 'I drink green tea every morning.');

    const first = await server.request('POST', '/memory/extract');
    expect(first.body).toEqual({ processed: [], failed: [{ session_id: session, message: expect.stringMatching(/malformed reply: the reply is not JSON/) }], summary_updated: false });
    reply = () => '{"facts":[{"category":"preferences","key":"tea"}]}';
    const second = await server.request('POST', '/memory/extract');
    expect(second.body.failed[0].message).toMatch(/does not match the facts schema/);
    expect((await server.request('GET', '/memory')).body).toEqual({ summary: null, facts: [] });

    reply = () => [{ category: 'preferences', key: 'morning_drink', value: 'Green tea' }];
    const third = await server.request('POST', '/memory/extract');
    expect(third.body).toEqual({ processed: [{ session_id: session, facts_changed: 1 }], failed: [], summary_updated: true });
    const extractions = extractionRequests(server);
    expect(extractions).toHaveLength(3);
    for (const request of extractions) expect(request.body.messages[1].content).toContain('User: I drink green tea every morning.');
    expect((await server.request('GET', '/memory')).body).toMatchObject({
      summary: 'The user drinks green tea every morning.',
      facts: [{ category: 'preferences', key: 'morning_drink', value: 'Green tea' }],
    });

    // Only messages after the last extraction are sent next time, with the known facts beside them.
    await say(server, session, 'I also have a cat called Miso.');
    reply = () => [{ category: 'people', key: 'cat', value: 'Miso' }];
    expect((await server.request('POST', '/memory/extract')).body.processed).toEqual([{ session_id: session, facts_changed: 1 }]);
    const latest = extractionRequests(server).at(-1)!.body.messages[1].content as string;
    expect(latest).toContain('User: I also have a cat called Miso.');
    expect(latest).not.toContain('green tea every morning');
    expect(latest).toContain('- preferences / morning_drink: Green tea');
  });

  it('asks OpenAI-compatible endpoints for a json_schema response_format', async () => {
    const server = await start({ backend: 'openai' });
    answer(server, { extraction: () => leipzigFacts, summary: leipzigSummary });
    const old = await server.createSession();
    await say(server, old, 'I live in Leipzig.');
    expect((await server.request('POST', '/memory/extract')).body.processed).toEqual([{ session_id: old, facts_changed: 2 }]);
    expect(extractionRequests(server)[0]!.body.response_format).toEqual({
      type: 'json_schema',
      json_schema: { name: 'response', schema: factsSchema, strict: true },
    });

    const fresh = await server.createSession();
    await say(server, fresh, 'Hello again');
    expect(chatRequests(server).at(-1)!.body.messages[1]).toEqual({
      role: 'system',
      content: `## What I remember about the user\n\n${leipzigSummary}`,
    });
  });

  it('a slow extraction never holds up a turn, and shutting down cancels it', async () => {
    const server = await start({ env: { MEMORY_IDLE_MINUTES: '1' } });
    server.llm.respondWith((request) => (isExtraction(request) ? { hang: true } : { content: 'Quick answer.' }));
    const old = await server.createSession();
    await say(server, old, 'I live in Leipzig.');
    makeIdle(server, old, 5);
    const fresh = await server.createSession();
    await waitUntil(() => extractionRequests(server).length === 1);
    const socket = await server.connect(fresh);
    socket.send({ type: 'message', content: 'Hi' });
    expect((await socket.next('stream_end')).content).toBe('Quick answer.');
    socket.close();
    await server.app.close();
    // The LLM server hears the aborted request's socket close a moment after the client let go
    // (and once it closes itself, it counts no socket as disconnected by the client).
    await waitUntil(() => extractionRequests(server)[0]!.disconnected, 5_000);
    await server.close();
  });
});

describe('memory REST API', () => {
  it('lists, upserts and deletes facts, and keeps the summary in step', async () => {
    const server = await start();
    answer(server, { summary: 'The user prefers metric units.' });
    expect((await server.request('GET', '/memory')).body).toEqual({ summary: null, facts: [] });

    const saved = await server.request('PUT', '/memory/facts', { category: ' Preferences', key: 'Units', value: 'metric' });
    expect(saved).toEqual({
      status: 200,
      body: { id: 1, category: 'preferences', key: 'units', value: 'metric', created_at: expect.any(String), updated_at: expect.any(String) },
    });
    const replaced = await server.request('PUT', '/memory/facts', { category: 'preferences', key: 'units', value: 'metric, 24-hour time' });
    expect(replaced.body).toMatchObject({ id: 1, value: 'metric, 24-hour time', created_at: saved.body.created_at });
    // A changed fact rewrites the summary in the background.
    await waitUntil(async () => (await server.request('GET', '/memory')).body.summary === 'The user prefers metric units.');

    for (const body of [
      { category: 'preferences', key: 'units' },
      { category: 'preferences', key: 'units', value: '   ' },
      { category: 'preferences', key: 'units', value: 'x', extra: true },
      { category: 'preferences', key: 'k'.repeat(129), value: 'x' },
      { category: 1, key: 'units', value: 'x' },
    ]) {
      const refused = await server.request('PUT', '/memory/facts', body);
      expect(refused.status).toBe(400);
      expect(refused.body.error.code).toBe('invalid_request');
    }

    expect(await server.request('DELETE', '/memory/facts/1')).toEqual({ status: 204, body: undefined });
    const missing = await server.request('DELETE', '/memory/facts/1');
    expect(missing).toEqual({ status: 404, body: { error: { code: 'not_found', message: 'No remembered fact with id 1.' } } });
    expect((await server.request('DELETE', '/memory/facts/abc')).status).toBe(400);
    // No facts left: the summary goes without asking the model.
    await waitUntil(async () => (await server.request('GET', '/memory')).body.summary === null);
    expect((await server.request('GET', '/memory')).body.facts).toEqual([]);

    expect((await server.request('POST', '/memory/extract')).body).toEqual({ processed: [], failed: [], summary_updated: false });
    expect(extractionRequests(server)).toEqual([]);
  });

  it('sits behind the token like every other route', async () => {
    const server = await start({ env: { AUTH_TOKEN: 'secret' } });
    expect((await server.request('GET', '/memory')).status).toBe(401);
    expect((await server.request('POST', '/memory/extract')).status).toBe(401);
    expect((await server.request('GET', '/memory', undefined, { authorization: 'Bearer secret' })).status).toBe(200);
  });

  it('deleting a session deletes its extraction state', async () => {
    const server = await start();
    answer(server, {});
    const session = await server.createSession();
    await say(server, session, 'Hello');
    await server.request('POST', '/memory/extract');
    const count = () => {
      const db = new Database(server.config.DB_PATH, { readonly: true });
      try {
        return (db.prepare('select count(*) as count from session_memory_state where session_id = ?').get(session) as { count: number }).count;
      } finally {
        db.close();
      }
    };
    expect(count()).toBe(1);
    expect((await server.request('DELETE', `/sessions/${session}`)).status).toBe(204);
    expect(count()).toBe(0);
  });
});

describe('memory tools in the tool loop', () => {
  it('saves, searches and forgets facts through the WebSocket protocol', async () => {
    const server = await start();
    answer(server, {
      summary: 'The user drinks flat whites.',
      chat: (_request, index) =>
        [
          { toolCalls: [{ name: 'memory_save', arguments: { category: 'preferences', key: 'coffee', value: 'Flat white, no sugar' } }] },
          { toolCalls: [{ name: 'memory_save', arguments: { category: 'environment', key: 'nas_address', value: '192.168.1.20' } }] },
          { toolCalls: [{ name: 'memory_search', arguments: { query: 'what coffee do I like?' } }] },
          { toolCalls: [{ name: 'memory_forget', arguments: { id: 1 } }, { name: 'memory_forget', arguments: { category: 'Environment', key: 'NAS address' } }] },
          { toolCalls: [{ name: 'memory_forget', arguments: { id: 1 } }] },
        ][index] ?? { content: 'Done.' },
    });
    const session = await server.createSession();
    const socket = await server.connect(session);
    socket.send({ type: 'message', content: 'Remember my coffee, then forget everything.' });
    expect((await socket.next('stream_end')).content).toBe('Done.');
    socket.close();

    const offered = chatRequests(server)[0]!.body.tools.map((tool: { function: { name: string } }) => tool.function.name);
    expect(offered).toEqual(expect.arrayContaining(['memory_search', 'memory_save', 'memory_forget']));
    const results = socket.ofType('tool_call').map((event) => [event.tool, event.success, event.result]);
    expect(results).toEqual([
      ['memory_save', true, 'Saved #1 [preferences] coffee: Flat white, no sugar'],
      ['memory_save', true, 'Saved #2 [environment] nas_address: 192.168.1.20'],
      ['memory_search', true, '1 fact, best match first:\n#1 [preferences] coffee: Flat white, no sugar'],
      ['memory_forget', true, 'Forgot #1 [preferences] coffee: Flat white, no sugar'],
      ['memory_forget', true, 'Forgot #2 [environment] nas_address: 192.168.1.20'],
      ['memory_forget', false, 'There is no remembered fact #1. Use memory_search to find it and its id.'],
    ]);
    await waitUntil(async () => (await server.request('GET', '/memory')).body.summary === null);
    expect((await server.request('GET', '/memory')).body.facts).toEqual([]);
  });
});
