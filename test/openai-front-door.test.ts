import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { promisify } from 'node:util';
import OpenAI from 'openai';
import { Agent, fetch as undiciFetch } from 'undici';
import { describe, expect, it, onTestFinished } from 'vitest';
import { useHearth, type Hearth } from './support/hearth-server.ts';
import { OllamaModelLibrary } from './support/ollama-model-library.ts';
import { household } from './support/people.ts';
import { startScriptedOllama } from './support/scripted-ollama.ts';
import { createTestTools } from './support/test-tools.ts';

// The OpenAI-compatible front door (issue 37) through the real `openai` client: a Hearth turn
// streamed and whole, its session kept per conversation, tools and approvals run inside Hearth,
// the key checked, the model list following the caller's rights, and a client that goes away stopping the run.

const startApp = useHearth();
const toolsProfile = `---\nid: adding\nname: Adding\ntools: [add_numbers]\n---\nYou add numbers.\n`;
const askingProfile = `---\nid: asking\nname: Asking\ntools: [add_numbers]\napprovals:\n  ask: [add_numbers]\n---\nYou add numbers.\n`;
const addTwoAndTwo = { toolCalls: [{ name: 'add_numbers', arguments: { a: 2, b: 2 } }] };

async function start(options: Parameters<typeof startApp>[0] = {}) {
  const hearth = await startApp({ tools: createTestTools(), profiles: { adding: toolsProfile, asking: askingProfile }, ...options });
  const owner = await hearth.deps.household.firstOwner();
  const { token } = await hearth.deps.accounts.tokens.create(owner.id, 'openai client');
  return { hearth, token, client: clientOf(hearth, token) };
}

function clientOf(hearth: Hearth, apiKey: string): OpenAI {
  return new OpenAI({ baseURL: `${hearth.baseUrl}/v1`, apiKey, maxRetries: 0 });
}

/** The sessions the front door made, newest first. */
async function openAiSessions(hearth: Hearth) {
  return (await hearth.deps.sessions!.list()).filter((session) => session.origin === 'openai');
}

async function streamed(stream: AsyncIterable<OpenAI.Chat.Completions.ChatCompletionChunk>, onContent?: (content: string) => void) {
  let content = '';
  let reasoning = '';
  const finishes: (string | null)[] = [];
  for await (const chunk of stream) {
    const [choice] = chunk.choices;
    expect(chunk.object).toBe('chat.completion.chunk');
    expect(choice!.delta).not.toHaveProperty('tool_calls');
    content += choice!.delta.content ?? '';
    reasoning += (choice!.delta as { reasoning_content?: string }).reasoning_content ?? '';
    finishes.push(choice!.finish_reason);
    onContent?.(content);
  }
  return { content, reasoning, finishes };
}

describe('POST /v1/chat/completions', () => {
  it('streams the answer as chunks, with the reasoning apart, into a session the page lists', async () => {
    const { hearth, client } = await start();
    hearth.llm.script({ thinking: 'The person greets me.', content: 'Hello from Hearth.', chunkSize: 4 });
    const stream = await client.chat.completions.create({ model: 'hearth/secretary', messages: [{ role: 'user', content: 'Hello' }], stream: true });
    const { content, reasoning, finishes } = await streamed(stream);
    expect(content).toBe('Hello from Hearth.');
    expect(reasoning).toBe('The person greets me.');
    expect(finishes.at(-1)).toBe('stop');
    expect(finishes.slice(0, -1).every((finish) => finish === null)).toBe(true);

    const [session] = await openAiSessions(hearth);
    expect(session).toMatchObject({ profileId: 'secretary', origin: 'openai' });
    const messages = await hearth.deps.sessions!.messages(session!.id, 'display');
    expect(messages.map((message) => [message.role, message.content])).toEqual([
      ['user', 'Hello'],
      ['assistant', 'Hello from Hearth.'],
    ]);
  });

  it('answers whole without stream, takes an image as a data URL, and refuses image addresses it would have to fetch', async () => {
    const { hearth, client } = await start();
    hearth.llm.script({ content: 'Whole answer.' });
    const completion = await client.chat.completions.create({ model: 'hearth/secretary', messages: [{ role: 'user', content: [{ type: 'text', text: 'Hi' }] }] });
    expect(completion).toMatchObject({
      object: 'chat.completion',
      model: 'hearth/secretary',
      choices: [{ index: 0, message: { role: 'assistant', content: 'Whole answer.' }, finish_reason: 'stop' }],
    });

    hearth.llm.script({ content: 'A pixel.' });
    const pixel = 'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=';
    await client.chat.completions.create({
      model: 'hearth/secretary',
      messages: [{ role: 'user', content: [{ type: 'text', text: 'What is this?' }, { type: 'image_url', image_url: { url: pixel } }] }],
    });
    const withImage = hearth.llm.requests.at(-1)!.body.messages.at(-1);
    expect(withImage).toMatchObject({ role: 'user', content: 'What is this?', images: [pixel.slice('data:image/png;base64,'.length)] });

    const refused = client.chat.completions.create({
      model: 'hearth/secretary',
      messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'https://example.com/cat.png' } }] }],
    });
    await expect(refused).rejects.toBeInstanceOf(OpenAI.BadRequestError);
    await expect(refused).rejects.toMatchObject({ status: 400, type: 'invalid_request_error', code: 'invalid_request', message: expect.stringContaining('data: URLs') });
  });

  it('continues the same conversation in the same session; a new chat, even one opening alike, gets its own', async () => {
    const { hearth, client } = await start();
    hearth.llm.script({ content: 'First answer.' }, { content: 'Second answer.' }, { content: 'Another chat.' });
    const first = await client.chat.completions.create({ model: 'hearth/secretary', messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'Hi' }] });
    const second = await client.chat.completions.create({
      model: 'hearth/secretary',
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'Hi' },
        { role: 'assistant', content: first.choices[0]!.message.content },
        { role: 'user', content: 'And then?' },
      ],
    });
    expect(second.choices[0]!.message.content).toBe('Second answer.');
    // The model heard the first exchange from the session, not from the client's copy of it.
    const sentToModel = hearth.llm.requests[1]!.body.messages.map((message: { role: string; content: string }) => message.content);
    expect(sentToModel).toEqual(expect.arrayContaining(['Hi', 'First answer.', 'And then?']));
    expect(await openAiSessions(hearth)).toHaveLength(1);

    await client.chat.completions.create({ model: 'hearth/secretary', messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'Hi' }] });
    const sessions = await openAiSessions(hearth);
    expect(sessions).toHaveLength(2);
    expect((await hearth.deps.sessions!.messages(sessions[1]!.id, 'display')).map((message) => message.content)).toEqual(['Hi', 'First answer.', 'And then?', 'Second answer.']);
  });

  it('keys a session by the user field, and starts a conversation it has no record of with the earlier messages', async () => {
    const { hearth, client } = await start();
    hearth.llm.script({ content: 'One.' }, { content: 'Two.' }, { content: 'Seeded.' });
    await client.chat.completions.create({ model: 'hearth/secretary', user: 'kitchen', messages: [{ role: 'user', content: 'Lights?' }] });
    await client.chat.completions.create({ model: 'hearth/secretary', user: 'kitchen', messages: [{ role: 'user', content: 'Oven?' }] });
    expect(await openAiSessions(hearth)).toHaveLength(1);

    await client.chat.completions.create({
      model: 'hearth/secretary',
      messages: [
        { role: 'user', content: 'Begun elsewhere' },
        { role: 'assistant', content: 'By another model' },
        { role: 'user', content: 'Go on' },
      ],
    });
    const [seeded] = await openAiSessions(hearth);
    expect(seeded!.title).toBe('Begun elsewhere');
    const [input] = await hearth.deps.sessions!.messages(seeded!.id, 'display');
    expect(input!.content).toBe(
      "[The conversation so far, from the chat app; Hearth has no record of it]\nuser: Begun elsewhere\n\nassistant: By another model\n[The person's new message]\nGo on",
    );
  });

  it('runs the tool call inside Hearth and streams only its answer', async () => {
    const { hearth, client } = await start();
    hearth.llm.script(addTwoAndTwo, { content: 'It is 4.' });
    const { content, reasoning } = await streamed(
      await client.chat.completions.create({ model: 'hearth/adding', messages: [{ role: 'user', content: 'Add two and two' }], stream: true }),
    );
    expect(content).toBe('It is 4.');
    expect(reasoning).toContain('⚙ add_numbers');
    const toolResult = hearth.llm.requests[1]!.body.messages.find((message: { role: string }) => message.role === 'tool');
    expect(toolResult.content).toContain('4');
  });

  it('says in the stream that a call waits, and goes on once it is decided in the page', async () => {
    const { hearth, client, token } = await start();
    hearth.llm.script(addTwoAndTwo, { content: 'It is 4.' });
    const stream = await client.chat.completions.create({ model: 'hearth/asking', messages: [{ role: 'user', content: 'Add two and two' }], stream: true });
    let decided: Promise<{ status: number }> | undefined;
    const { content } = await streamed(stream, (soFar) => {
      if (decided || !soFar.includes('⏳ Waiting for approval')) return;
      decided = (async () => {
        // What the page does: its list of waiting calls, then the decision over REST.
        const auth = { authorization: `Bearer ${token}`, 'x-hearth-client': 'page' };
        const pending = await hearth.request('GET', '/approvals?status=pending', undefined, auth);
        const [waiting] = pending.body.approvals;
        return hearth.request('POST', `/sessions/${waiting.session_id}/approvals/${waiting.call_id}`, { decision: 'allow' }, auth);
      })();
    });
    expect((await decided!).status).toBe(200);
    expect(content).toMatch(/⏳ Waiting for approval: add_numbers — decide in Hearth's page or Telegram\.\n\n✅ Allowed by .+\.\n\nIt is 4\.$/);
  });

  it('refuses a second request while the conversation answers, and ends the stream when the page stops the run', async () => {
    const { hearth, client } = await start();
    hearth.llm.script({ content: 'Partial', hang: true });
    const messages = [{ role: 'user' as const, content: 'Go on' }];
    const stream = await client.chat.completions.create({ model: 'hearth/secretary', user: 'kitchen', messages, stream: true });
    const read = streamed(stream);
    await hearth.llm.waitForRequest(1);
    // Even one naming another profile: the running turn's session keeps its own.
    await expect(client.chat.completions.create({ model: 'hearth/smart_home', user: 'kitchen', messages })).rejects.toMatchObject({ status: 409, code: 'session_busy' });
    const [session] = await openAiSessions(hearth);
    expect(session!.profileId).toBe('secretary');
    expect(hearth.deps.sessions!.stop(session!.id)).toBe(true);
    const { content, finishes } = await read;
    expect(content).toBe('Partial');
    expect(finishes.at(-1)).toBe('stop');
  });

  it("tells the backend's failure in OpenAI's shape, streamed and whole", async () => {
    const { hearth, client } = await start();
    hearth.llm.script({ status: 500, errorMessage: 'the model fell over' }, { status: 500, errorMessage: 'the model fell over' });
    const stream = await client.chat.completions.create({ model: 'hearth/secretary', messages: [{ role: 'user', content: 'Hi' }], stream: true });
    await expect(streamed(stream)).rejects.toMatchObject({ error: { type: 'server_error', code: 'llm_error' } });
    await expect(client.chat.completions.create({ model: 'hearth/secretary', messages: [{ role: 'user', content: 'Hi' }] })).rejects.toMatchObject({
      status: 502,
      type: 'server_error',
      code: 'llm_error',
    });
  });

  it("keeps each person's conversations apart, even under the same user field", async () => {
    const { hearth } = await start();
    const { owner, people } = await household(hearth, ['adult']);
    hearth.llm.script({ content: 'For the owner.' }, { content: 'For the adult.' });
    const messages = [{ role: 'user' as const, content: 'What is on my list?' }];
    await clientOf(hearth, owner.token).chat.completions.create({ model: 'hearth/secretary', user: 'kitchen', messages });
    await clientOf(hearth, people[0].token).chat.completions.create({ model: 'hearth/secretary', user: 'kitchen', messages });
    const sessions = await openAiSessions(hearth);
    expect(sessions.map((session) => session.personId).sort()).toEqual([owner.person.id, people[0].person.id].sort());
  });

  it('stops the run when the client goes away, streamed or whole', async () => {
    const { hearth, token } = await start();
    // A connection pool of the test's own: after an abort, undici opens a fresh connection it never uses, which would hold the server's close.
    const dispatcher = new Agent();
    const fetch = (url: string | URL | Request, init?: RequestInit) => undiciFetch(url as string, { ...(init as object), dispatcher }) as unknown as Promise<Response>;
    const client = new OpenAI({ baseURL: `${hearth.baseUrl}/v1`, apiKey: token, maxRetries: 0, fetch });
    hearth.llm.script({ content: 'Partial', hang: true });
    try {
      await abortedTurn(hearth, client);
      // Without `stream` too: the client gives up while the model still writes.
      hearth.llm.script({ content: 'Half', hang: true });
      const controller = new AbortController();
      const asked = client.chat.completions.create({ model: 'hearth/secretary', user: 'whole', messages: [{ role: 'user', content: 'Another story' }] }, { signal: controller.signal });
      const disconnected = hearth.llm.waitForDisconnect();
      await hearth.llm.waitForRequest(2);
      controller.abort();
      await expect(asked).rejects.toBeInstanceOf(OpenAI.APIUserAbortError);
      await disconnected;
      const [whole] = await openAiSessions(hearth);
      await hearth.deps.sessions!.whenIdle(whole!.id);
      expect((await hearth.deps.sessions!.messages(whole!.id, 'display')).at(-1)).toMatchObject({ role: 'assistant', stopped: true });
    } finally {
      await dispatcher.destroy();
    }
  });
});

describe('docs/openai-compatible.md', () => {
  it('streams what its curl example shows it prints', async () => {
    const { hearth, token } = await start();
    hearth.llm.script({ chunks: ['Hello! How can I help?'] });
    const docs = await readFile('docs/openai-compatible.md', 'utf8');
    const [command] = codeBlocks(docs, 'sh');
    const [printed] = codeBlocks(docs, '');
    const { stdout } = await promisify(execFile)('sh', ['-c', command!.replaceAll('http://127.0.0.1:8000', hearth.baseUrl)], {
      env: { PATH: process.env.PATH, HEARTH_TOKEN: token },
    });
    const lines = stdout.split('\n\n').filter((line) => line !== '');
    const documented = printed!.trim().split('\n');
    expect(lines).toHaveLength(documented.length);
    documented.forEach((line, index) => expect(lines[index]).toMatch(documentedLine(line)));
  });
});

describe('the key and the models', () => {
  it('refuses a wrong key with 401 in OpenAI shape, even on a loopback Hearth of one, which takes no key as the rest of the API does', async () => {
    const { hearth } = await start();
    await expect(clientOf(hearth, 'not-a-token').models.list()).rejects.toBeInstanceOf(OpenAI.AuthenticationError);
    const wrong = await hearth.request('GET', '/v1/models', undefined, { authorization: 'Bearer not-a-token' });
    expect(wrong).toEqual({ status: 401, body: { error: { message: expect.any(String), type: 'authentication_error', code: 'invalid_api_key' } } });
    expect((await hearth.request('GET', '/v1/models')).status).toBe(200);

    await household(hearth, ['adult']);
    const none = await hearth.request('GET', '/v1/models');
    expect(none.status).toBe(401);
    expect(none.body.error).toMatchObject({ type: 'authentication_error', code: 'invalid_api_key' });
  });

  it("lists the profiles the caller's role may use, with the default backend's models, and refuses the others", async () => {
    const { hearth } = await start();
    const { owner, people } = await household(hearth, ['child']);
    const [child] = people;
    const ownerModels = (await clientOf(hearth, owner.token).models.list()).data.map((model) => model.id);
    expect(ownerModels).toEqual(expect.arrayContaining(['hearth/secretary', 'hearth/server_admin', 'hearth/smart_home', 'hearth/secretary:fake:latest']));
    const childList = await clientOf(hearth, child.token).models.list();
    expect(childList.data[0]).toEqual({ id: expect.any(String), object: 'model', created: expect.any(Number), owned_by: 'hearth' });
    const childModels = childList.data.map((model) => model.id);
    expect(childModels).toEqual(expect.arrayContaining(['hearth/secretary', 'hearth/smart_home']));
    expect(childModels.filter((id) => id.startsWith('hearth/server_admin'))).toEqual([]);
    expect(childModels.length).toBeLessThan(ownerModels.length);

    const asChild = clientOf(hearth, child.token);
    const messages = [{ role: 'user' as const, content: 'Reboot it' }];
    await expect(asChild.chat.completions.create({ model: 'hearth/server_admin', messages })).rejects.toBeInstanceOf(OpenAI.PermissionDeniedError);
    await expect(asChild.chat.completions.create({ model: 'hearth/nothing', messages })).rejects.toMatchObject({ status: 404, code: 'model_not_found' });
    await expect(asChild.chat.completions.create({ model: 'gpt-4o', messages })).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    expect(await openAiSessions(hearth)).toEqual([]);
  });

  it('gives the session the model a profile:model pair names', async () => {
    const { hearth, client } = await start();
    hearth.llm.script({ content: 'Yes.' });
    await client.chat.completions.create({ model: 'hearth/secretary:fake:latest', messages: [{ role: 'user', content: 'Which model?' }] });
    const [session] = await openAiSessions(hearth);
    expect(session!.model).toBe('fake:latest');
    expect(hearth.llm.requests[0]!.body.model).toBe('fake:latest');
    await expect(client.chat.completions.create({ model: 'hearth/secretary:missing:1b', messages: [{ role: 'user', content: 'Hi' }] })).rejects.toBeInstanceOf(
      OpenAI.NotFoundError,
    );
  });

  it('refuses a profile:model pair whose model cannot call the profile’s tools, as PATCH /sessions/:id does', async () => {
    const library = new OllamaModelLibrary({
      installed: [
        { name: 'gemma3:1b', capabilities: ['completion', 'vision'], layers: [800_000_000, 300] },
        { name: 'qwen3:8b', capabilities: ['completion', 'tools', 'thinking'], layers: [5_000_000_000, 500] },
      ],
    });
    const ollama = await startScriptedOllama({ library });
    // After the Hearth that uses it is closed.
    onTestFinished(() => ollama.close());
    const { hearth, client } = await start({ llm: ollama });
    const ids = (await client.models.list()).data.map((model) => model.id);
    expect(ids).toEqual(expect.arrayContaining(['hearth/secretary:gemma3:1b', 'hearth/secretary:qwen3:8b']));
    const refused = client.chat.completions.create({ model: 'hearth/secretary:gemma3:1b', messages: [{ role: 'user', content: 'Hi' }] });
    await expect(refused).rejects.toMatchObject({ status: 400, code: 'model_cannot_call_tools', message: expect.stringMatching(/gemma3:1b cannot call tools/) });
    expect(await openAiSessions(hearth)).toEqual([]);
  });
});

/** A streamed turn the client aborts after its first words: the run stops, its partial answer kept as stopped. */
async function abortedTurn(hearth: Hearth, client: OpenAI) {
  const controller = new AbortController();
  const stream = await client.chat.completions.create(
    { model: 'hearth/secretary', messages: [{ role: 'user', content: 'Tell me a long story' }], stream: true },
    { signal: controller.signal },
  );
  const disconnected = hearth.llm.waitForDisconnect();
  // The client ends its loop quietly once aborted.
  const { finishes } = await streamed(stream, (content) => {
    if (content === 'Partial') controller.abort();
  });
  expect(finishes).not.toContain('stop');
  await disconnected;
  const [session] = await openAiSessions(hearth);
  await hearth.deps.sessions!.whenIdle(session!.id);
  const messages = await hearth.deps.sessions!.messages(session!.id, 'display');
  expect(messages.at(-1)).toMatchObject({ role: 'assistant', content: 'Partial', stopped: true });
}

/** The fenced blocks of a Markdown text in `language` ('' for a bare fence), read fence by fence. */
function codeBlocks(markdown: string, language: string): string[] {
  const blocks: string[] = [];
  let open: { language: string; lines: string[] } | undefined;
  for (const line of markdown.split('\n')) {
    if (!line.startsWith('```')) open?.lines.push(line);
    else if (open) {
      if (open.language === language) blocks.push(open.lines.join('\n'));
      open = undefined;
    } else open = { language: line.slice(3).trim(), lines: [] };
  }
  return blocks;
}

/** A printed line of the docs as a pattern: its id and time stand for any. */
function documentedLine(line: string): RegExp {
  const escaped = line.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return new RegExp(`^${escaped.replace('chatcmpl-…', 'chatcmpl-[0-9a-f-]+').replace('"created":1764390000', '"created":\\d+')}$`);
}
