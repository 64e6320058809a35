import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { startHearth, type Hearth, useHearth } from './support/hearth-server.ts';
import { unusedPort } from './support/llm-helpers.ts';

const startApp = useHearth();

async function start(options: Parameters<typeof startHearth>[0] = {}): Promise<Hearth> {
  const hearth = await startApp(options);
  return hearth;
}

type Response = { status: number; body: any };

function expectError(response: Response, status: number, code: string, mentioning?: string): void {
  expect(response.status).toBe(status);
  expect(response.body).toEqual({ error: { code, message: expect.any(String) } });
  if (mentioning !== undefined) expect(response.body.error.message).toContain(mentioning);
}

/** Sends one message over REST and waits for the whole turn. */
async function say(server: Hearth, sessionId: string, content: string): Promise<Response> {
  return server.request('POST', `/sessions/${sessionId}/messages`, { content });
}


/** Rows stored for a session, read straight from the SQLite file. */
function rowCounts(dbPath: string, sessionId: string): Record<string, number> {
  const db = new Database(dbPath, { readonly: true });
  try {
    const count = (sql: string) => (db.prepare(sql).get(sessionId) as { count: number }).count;
    return {
      sessions: count('select count(*) as count from sessions where id = ?'),
      messages: count('select count(*) as count from messages where session_id = ?'),
      scratchpad: count('select count(*) as count from scratchpad_sections where session_id = ?'),
      todo: count('select count(*) as count from todo_lists where session_id = ?'),
    };
  } finally {
    db.close();
  }
}

describe('GET /health', () => {
  it('answers ok with the package version', async () => {
    const server = await start();
    const { version } = JSON.parse(await readFile('package.json', 'utf8')) as { version: string };
    expect(await server.request('GET', '/health')).toEqual({
      status: 200,
      body: { status: 'ok', version, jail: expect.objectContaining({ state: expect.stringMatching(/^(on|off|unavailable)$/) }) },
    });
  });
});

describe('GET /agents/profiles', () => {
  it('lists the three shipped profiles with every field', async () => {
    const server = await start({ planning: true });
    const { status, body } = await server.request('GET', '/agents/profiles');
    expect(status).toBe(200);
    expect(body.errors).toEqual([]);
    expect(body.profiles.map((profile: any) => profile.id).sort()).toEqual(['secretary', 'server_admin', 'smart_home']);
    for (const profile of body.profiles) {
      expect(Object.keys(profile).sort()).toEqual(
        ['approvers', 'backend', 'description', 'enabled_tools', 'examples', 'heartbeat', 'id', 'may_use', 'model', 'name', 'people', 'planning_enabled', 'prompt_characters', 'temperature'].sort(),
      );
      // The shipped profiles stay under the per-call budget the Tools panel warns about.
      expect(profile.prompt_characters, profile.id).toBeGreaterThan(1_000);
      expect(profile.prompt_characters, profile.id).toBeLessThan(12_000);
      expect(profile.examples, profile.id).toHaveLength(2);
      // Off as shipped (docs/agent.md, "Heartbeat").
      expect(profile.heartbeat, profile.id).toBeNull();
      // The owner a Hearth starts with may use every profile.
      expect(profile.may_use, profile.id).toBe(true);
    }
    const access = Object.fromEntries(body.profiles.map((profile: any) => [profile.id, [profile.people, profile.approvers]]));
    expect(access).toEqual({
      secretary: [['owner', 'adult', 'child'], ['owner', 'adult']],
      server_admin: [['owner', 'adult'], ['owner']],
      smart_home: [['owner', 'adult', 'child', 'guest'], ['owner', 'adult']],
    });
    const secretary = body.profiles.find((profile: any) => profile.id === 'secretary');
    expect(secretary).toMatchObject({
      name: 'Personal Secretary',
      description: expect.stringContaining('notes'),
      examples: [expect.stringMatching(/^Plan /), expect.stringMatching(/^Make a tool /)],
      backend: 'ollama',
      model: 'qwen3:8b',
      temperature: 0.7,
      planning_enabled: true,
    });
  });

  it('reports as enabled only the tools that exist', async () => {
    const server = await start();
    const { body } = await server.request('GET', '/agents/profiles');
    const available = new Set(((await server.request('GET', '/agents/tools')).body.tools as { name: string }[]).map((tool) => tool.name));
    for (const profile of body.profiles) {
      expect(profile.enabled_tools).toEqual(expect.arrayContaining(['scratchpad', 'todo']));
      for (const name of profile.enabled_tools) expect(available.has(name)).toBe(true);
    }
  });
});

describe('GET /agents/tools', () => {
  it('lists scratchpad and todo as built-ins with their schemas', async () => {
    const server = await start();
    const { status, body } = await server.request('GET', '/agents/tools');
    expect(status).toBe(200);
    expect(body.errors).toEqual([]);
    for (const name of ['scratchpad', 'todo']) {
      expect(body.tools).toContainEqual({
        name,
        description: expect.any(String),
        parameters: expect.objectContaining({ type: 'object' }),
        source: 'builtin',
        prompt_characters: expect.any(Number),
      });
    }
    expect(body.prompt_budget).toBe(12_000);
  });
});

describe('POST /sessions', () => {
  it('creates a secretary session by default', async () => {
    const server = await start();
    const { status, body } = await server.request('POST', '/sessions', {});
    expect(status).toBe(201);
    expect(body).toEqual({ session_id: expect.any(String), profile_id: 'secretary', title: '', created_at: expect.any(String) });
    expect(Number.isNaN(Date.parse(body.created_at))).toBe(false);
  });

  it('accepts a request without a body', async () => {
    const server = await start();
    const { status, body } = await server.request('POST', '/sessions');
    expect(status).toBe(201);
    expect(body.profile_id).toBe('secretary');
  });

  it('creates a session with the profile asked for', async () => {
    const server = await start();
    const { status, body } = await server.request('POST', '/sessions', { profile_id: 'server_admin' });
    expect(status).toBe(201);
    expect(body.profile_id).toBe('server_admin');
    expect((await server.request('GET', `/sessions/${body.session_id}`)).body.profile_id).toBe('server_admin');
  });

  it('refuses an unknown profile with 400 unknown_profile', async () => {
    const server = await start();
    expectError(await server.request('POST', '/sessions', { profile_id: 'astronaut' }), 400, 'unknown_profile', 'astronaut');
    expect((await server.request('GET', '/sessions')).body).toEqual([]);
  });

  it('refuses an empty profile_id with 400 invalid_request naming the field', async () => {
    const server = await start();
    expectError(await server.request('POST', '/sessions', { profile_id: '' }), 400, 'invalid_request', 'profile_id');
  });

  it('refuses a profile_id that is not a string with 400 invalid_request naming the field', async () => {
    const server = await start();
    expectError(await server.request('POST', '/sessions', { profile_id: 42 }), 400, 'invalid_request', 'profile_id');
  });

  it('refuses a field it does not know, naming it', async () => {
    const server = await start();
    expectError(await server.request('POST', '/sessions', { profile: 'secretary' }), 400, 'invalid_request', '"profile"');
  });

  it('refuses a body that is not JSON with 400 invalid_request', async () => {
    const server = await start();
    const response = await fetch(`${server.baseUrl}/sessions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"profile_id":',
    });
    expectError({ status: response.status, body: await response.json() }, 400, 'invalid_request');
  });
});

describe('GET /sessions', () => {
  it('lists pinned sessions first, then the most recently active', async () => {
    const server = await start();
    const first = await server.createSession();
    const second = await server.createSession();
    const third = await server.createSession();
    for (const sessionId of [first, second, third]) expect((await say(server, sessionId, 'hello')).status).toBe(200);
    expect((await server.request('GET', '/sessions')).body.map((session: any) => session.session_id)).toEqual([third, second, first]);

    expect((await say(server, first, 'wake up')).status).toBe(200);
    expect((await server.request('PATCH', `/sessions/${second}/pin`, { pinned: true })).status).toBe(200);

    const { status, body } = await server.request('GET', '/sessions');
    expect(status).toBe(200);
    expect(body.map((session: any) => [session.session_id, session.pinned])).toEqual([
      [second, true],
      [first, false],
      [third, false],
    ]);
  });

  it('gives each summary its id, title, profile, pin, times and running flag', async () => {
    const server = await start();
    const sessionId = await server.createSession('smart_home');
    expect((await say(server, sessionId, 'Lights off')).status).toBe(200);
    const { body } = await server.request('GET', '/sessions');
    expect(body).toEqual([
      {
        session_id: sessionId,
        title: 'Lights off',
        profile_id: 'smart_home',
        pinned: false,
        created_at: expect.any(String),
        last_active: expect.any(String),
        running: false,
        model: null,
        shared: false,
        owner: { id: expect.any(String), name: 'Owner' },
      },
    ]);
  });
});

describe('GET /sessions/:id', () => {
  it('answers a new session with an empty display buffer', async () => {
    const server = await start();
    const sessionId = await server.createSession();
    const { status, body } = await server.request('GET', `/sessions/${sessionId}`);
    expect(status).toBe(200);
    expect(body).toEqual({
      session_id: sessionId,
      title: '',
      profile_id: 'secretary',
      pinned: false,
      created_at: expect.any(String),
      last_active: expect.any(String),
      running: false,
      model: null,
      shared: false,
      owner: { id: expect.any(String), name: 'Owner' },
      state: 'idle',
      approvals: [],
      messages: [],
    });
  });

  it('shows the display buffer after a turn and titles the session from the first message', async () => {
    const server = await start();
    server.llm.script({ content: 'Hello, Ada.' });
    const sessionId = await server.createSession();
    await say(server, sessionId, 'Hi, I am Ada\nand I like tea');
    const { body } = await server.request('GET', `/sessions/${sessionId}`);
    expect(body.title).toBe('Hi, I am Ada');
    expect(body.messages).toEqual([
      { id: expect.any(Number), role: 'user', content: 'Hi, I am Ada\nand I like tea', created_at: expect.any(String) },
      { id: expect.any(Number), role: 'assistant', content: 'Hello, Ada.', created_at: expect.any(String) },
    ]);
  });
});

describe('GET /sessions/:id/context', () => {
  it('answers the LLM context with its token counts', async () => {
    const server = await start();
    server.llm.script({ content: 'Four.', usage: { promptTokens: 300, completionTokens: 12 } });
    const sessionId = await server.createSession();
    expect((await server.request('GET', `/sessions/${sessionId}/context`)).body).toEqual({
      messages: [],
      context_tokens: 0,
      max_context_tokens: 32768,
    });

    await say(server, sessionId, 'Two plus two?');
    const { status, body } = await server.request('GET', `/sessions/${sessionId}/context`);
    expect(status).toBe(200);
    expect(body.context_tokens).toBe(312);
    expect(body.max_context_tokens).toBe(32768);
    expect(body.messages.map((message: any) => [message.role, message.content])).toEqual([
      ['user', 'Two plus two?'],
      ['assistant', 'Four.'],
    ]);
  });
});

describe('PATCH /sessions/:id', () => {
  it('sets a title that a later first message does not overwrite', async () => {
    const server = await start();
    const sessionId = await server.createSession();
    const patched = await server.request('PATCH', `/sessions/${sessionId}`, { title: '  Holiday plans  ' });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({ session_id: sessionId, title: 'Holiday plans' });

    await say(server, sessionId, 'Where should I go in May?');
    expect((await server.request('GET', `/sessions/${sessionId}`)).body.title).toBe('Holiday plans');
  });

  it('changes the profile, and the next turn uses its prompt', async () => {
    const server = await start();
    const sessionId = await server.createSession();
    const patched = await server.request('PATCH', `/sessions/${sessionId}`, { profile_id: 'server_admin' });
    expect(patched.status).toBe(200);
    expect(patched.body.profile_id).toBe('server_admin');
    expect((await server.request('GET', `/sessions/${sessionId}`)).body.profile_id).toBe('server_admin');

    await say(server, sessionId, 'Is the disk full?');
    const request = server.llm.requests[0]!.body;
    expect(request.options?.temperature).toBe(0.2);
  });

  it('sets and clears the pin', async () => {
    const server = await start();
    const sessionId = await server.createSession();
    expect((await server.request('PATCH', `/sessions/${sessionId}`, { pinned: true })).body.pinned).toBe(true);
    expect((await server.request('PATCH', `/sessions/${sessionId}`, { pinned: false })).body.pinned).toBe(false);
  });

  it('refuses an unknown profile with 400 and changes nothing', async () => {
    const server = await start();
    const sessionId = await server.createSession();
    expectError(await server.request('PATCH', `/sessions/${sessionId}`, { profile_id: 'astronaut', title: 'New' }), 400, 'unknown_profile', 'astronaut');
    expect((await server.request('GET', `/sessions/${sessionId}`)).body).toMatchObject({ profile_id: 'secretary', title: '' });
  });

  it('refuses a pinned flag that is not a boolean, naming the field', async () => {
    const server = await start();
    const sessionId = await server.createSession();
    expectError(await server.request('PATCH', `/sessions/${sessionId}`, { pinned: 'yes' }), 400, 'invalid_request', 'pinned');
  });

  it('refuses a pinned flag given as a number, naming the field', async () => {
    const server = await start();
    const sessionId = await server.createSession();
    expectError(await server.request('PATCH', `/sessions/${sessionId}`, { pinned: 1 }), 400, 'invalid_request', 'pinned');
    expect((await server.request('GET', `/sessions/${sessionId}`)).body.pinned).toBe(false);
  });

  it('refuses a title that is not a string, naming the field', async () => {
    const server = await start();
    const sessionId = await server.createSession();
    expectError(await server.request('PATCH', `/sessions/${sessionId}`, { title: 5 }), 400, 'invalid_request', 'title');
    expect((await server.request('GET', `/sessions/${sessionId}`)).body.title).toBe('');
  });

  it('refuses a field it does not know, naming it', async () => {
    const server = await start();
    const sessionId = await server.createSession();
    expectError(await server.request('PATCH', `/sessions/${sessionId}`, { titel: 'Typo' }), 400, 'invalid_request', 'titel');
  });
});

describe('PATCH /sessions/:id/pin', () => {
  it('pins and unpins a session', async () => {
    const server = await start();
    const sessionId = await server.createSession();
    const pinned = await server.request('PATCH', `/sessions/${sessionId}/pin`, { pinned: true });
    expect(pinned.status).toBe(200);
    expect(pinned.body).toMatchObject({ session_id: sessionId, pinned: true });
    expect((await server.request('GET', `/sessions/${sessionId}`)).body.pinned).toBe(true);

    expect((await server.request('PATCH', `/sessions/${sessionId}/pin`, { pinned: false })).body.pinned).toBe(false);
    expect((await server.request('GET', `/sessions/${sessionId}`)).body.pinned).toBe(false);
  });

  it('refuses a body without pinned, naming the field', async () => {
    const server = await start();
    const sessionId = await server.createSession();
    expectError(await server.request('PATCH', `/sessions/${sessionId}/pin`, {}), 400, 'invalid_request', 'pinned');
  });
});

describe('DELETE /sessions/:id', () => {
  it('answers 204 with no body, after which the session is gone', async () => {
    const server = await start();
    const sessionId = await server.createSession();
    const response = await fetch(`${server.baseUrl}/sessions/${sessionId}`, { method: 'DELETE' });
    expect(response.status).toBe(204);
    expect(await response.text()).toBe('');
    expectError(await server.request('GET', `/sessions/${sessionId}`), 404, 'session_not_found');
    expect((await server.request('GET', '/sessions')).body).toEqual([]);
  });

  it('removes its messages, scratchpad, todo and files, and nothing of other sessions', async () => {
    const server = await start();
    server.llm.script(
      {
        toolCalls: [
          { name: 'scratchpad', arguments: { action: 'write', section: 'plan', content: 'Buy milk' } },
          { name: 'todo', arguments: { action: 'set', items: ['Buy milk', 'Call mum'] } },
        ],
      },
      { content: 'Noted.' },
      { content: 'Hello.' },
    );
    const doomed = await server.createSession();
    const kept = await server.createSession();
    expect((await say(server, doomed, 'Remember to buy milk')).body.content).toBe('Noted.');
    await say(server, kept, 'Hi');
    const files = path.join(server.config.SESSION_FILES_DIR, doomed);
    await mkdir(files, { recursive: true });
    await writeFile(path.join(files, 'notes.txt'), 'uploaded');
    expect(rowCounts(server.config.DB_PATH, doomed)).toEqual({ sessions: 1, messages: 10, scratchpad: 1, todo: 1 });
    const keptBefore = rowCounts(server.config.DB_PATH, kept);

    expect((await server.request('DELETE', `/sessions/${doomed}`)).status).toBe(204);

    expect(rowCounts(server.config.DB_PATH, doomed)).toEqual({ sessions: 0, messages: 0, scratchpad: 0, todo: 0 });
    expect(existsSync(files)).toBe(false);
    expect(rowCounts(server.config.DB_PATH, kept)).toEqual(keptBefore);
  });

  it('stops a running turn before deleting', async () => {
    const server = await start();
    server.llm.script({ hang: true });
    const sessionId = await server.createSession();
    const turn = say(server, sessionId, 'Take your time');
    await server.llm.waitForRequest(1);

    expect((await server.request('DELETE', `/sessions/${sessionId}`)).status).toBe(204);
    await server.llm.waitForDisconnect();
    expect((await turn).body).toMatchObject({ stopped: true });
    expect(rowCounts(server.config.DB_PATH, sessionId)).toEqual({ sessions: 0, messages: 0, scratchpad: 0, todo: 0 });
  });
});

describe('unknown session', () => {
  const missing = '00000000-0000-4000-8000-000000000000';
  it.each([
    ['GET', `/sessions/${missing}`, undefined],
    ['GET', `/sessions/${missing}/context`, undefined],
    ['PATCH', `/sessions/${missing}`, { title: 'x' }],
    ['PATCH', `/sessions/${missing}/pin`, { pinned: true }],
    ['DELETE', `/sessions/${missing}`, undefined],
    ['POST', `/sessions/${missing}/messages`, { content: 'Hello?' }],
    ['POST', `/sessions/${missing}/stop`, undefined],
  ])('%s %s answers 404 session_not_found', async (method, url, body) => {
    const server = await start();
    expectError(await server.request(method, url, body), 404, 'session_not_found', missing);
    expect(server.llm.requests).toEqual([]);
  });
});

describe('POST /sessions/:id/messages', () => {
  it('runs a whole turn and answers its content and token counts', async () => {
    const server = await start();
    server.llm.script({ content: 'Paris.', usage: { promptTokens: 90, completionTokens: 3 } });
    const sessionId = await server.createSession();
    expect(await say(server, sessionId, 'Capital of France?')).toEqual({
      status: 200,
      body: { content: 'Paris.', stopped: false, context_tokens: 93, max_context_tokens: 32768 },
    });
  });

  it('runs requested tool calls before answering', async () => {
    const server = await start();
    server.llm.script(
      { toolCalls: [{ name: 'todo', arguments: { action: 'set', items: ['Pack'] } }] },
      { content: 'Your list is ready.' },
    );
    const sessionId = await server.createSession();
    expect((await say(server, sessionId, 'Make me a list')).body.content).toBe('Your list is ready.');
    const { body } = await server.request('GET', `/sessions/${sessionId}`);
    expect(body.messages.map((message: any) => message.role)).toEqual(['user', 'assistant', 'tool', 'assistant']);
    expect(body.messages[2]).toMatchObject({ name: 'todo', success: true, content: expect.stringContaining('Pack') });
  });

  it('refuses empty content with 400 invalid_request naming the field', async () => {
    const server = await start();
    const sessionId = await server.createSession();
    expectError(await server.request('POST', `/sessions/${sessionId}/messages`, { content: '' }), 400, 'invalid_request', 'content');
    expect(server.llm.requests).toEqual([]);
  });

  it('refuses a second message while one runs with 409 session_busy', async () => {
    const server = await start();
    server.llm.script({ hang: true });
    const sessionId = await server.createSession();
    const first = say(server, sessionId, 'First question');
    await server.llm.waitForRequest(1);

    expectError(await say(server, sessionId, 'Second question'), 409, 'session_busy');
    expect((await server.request('GET', `/sessions/${sessionId}`)).body.running).toBe(true);

    expect(await server.request('POST', `/sessions/${sessionId}/stop`)).toEqual({ status: 200, body: { stopped: true } });
    expect(await first).toMatchObject({ status: 200, body: { content: '', stopped: true } });
    expect(server.llm.requests).toHaveLength(1);
  });
});

describe('POST /sessions/:id/stop', () => {
  it('cancels the LLM request, keeps the partial answer marked stopped, and frees the session', async () => {
    const server = await start();
    server.llm.script({ content: 'Once upon a time', chunkSize: 4, hang: true }, { content: 'Next answer.' });
    const sessionId = await server.createSession();
    const socket = await server.connect(sessionId);
    await socket.next('session_sync');
    const turn = say(server, sessionId, 'Tell me a story');
    let streamed = '';
    while (streamed !== 'Once upon a time') streamed += (await socket.next('stream_delta')).delta;

    expect((await server.request('POST', `/sessions/${sessionId}/stop`)).body).toEqual({ stopped: true });
    await server.llm.waitForDisconnect();
    // A stopped run stores an estimate of its context, so the page's meter does not fall to 0 %.
    const stoppedTurn = (await turn).body;
    expect(stoppedTurn).toEqual({ content: 'Once upon a time', stopped: true, context_tokens: expect.any(Number), max_context_tokens: 32768 });
    expect(stoppedTurn.context_tokens).toBeGreaterThan(0);
    expect(await socket.next('stream_stopped')).toEqual({ type: 'stream_stopped', content: 'Once upon a time', length: 16, reason: 'user' });
    const { body } = await server.request('GET', `/sessions/${sessionId}`);
    expect(body.running).toBe(false);
    expect(body.messages.at(-1)).toMatchObject({ role: 'assistant', content: 'Once upon a time', stopped: true });

    expect((await say(server, sessionId, 'Go on')).body).toMatchObject({ content: 'Next answer.', stopped: false });
    socket.close();
  });

  it('answers stopped:false when no run is active', async () => {
    const server = await start();
    const sessionId = await server.createSession();
    expect(await server.request('POST', `/sessions/${sessionId}/stop`)).toEqual({ status: 200, body: { stopped: false } });
  });
});

describe('unknown route', () => {
  it('answers 404 with a JSON error', async () => {
    const server = await start();
    expectError(await server.request('GET', '/no/such/route'), 404, 'not_found', '/no/such/route');
    expectError(await server.request('POST', '/health', {}), 404, 'not_found');
  });
});

describe('LLM unreachable', () => {
  it('answers 502 llm_unreachable naming the URL, and the server keeps serving', async () => {
    const port = await unusedPort();
    const ollamaUrl = `http://127.0.0.1:${port}`;
    const server = await start({ env: { OLLAMA_HOST: ollamaUrl } });
    const sessionId = await server.createSession();

    expectError(await say(server, sessionId, 'Anyone there?'), 502, 'llm_unreachable', ollamaUrl);

    expect((await server.request('GET', '/health')).status).toBe(200);
    const { body } = await server.request('GET', `/sessions/${sessionId}`);
    expect(body.running).toBe(false);
    expect(body.messages.map((message: any) => message.content)).toEqual(['Anyone there?']);
    expectError(await say(server, sessionId, 'Still there?'), 502, 'llm_unreachable');
  });
});
