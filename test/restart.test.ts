import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type Hearth, useHearth } from './support/hearth-server.ts';
import type { ScriptedLlm } from './support/scripted-llm.ts';
import { startScriptedOllama } from './support/scripted-ollama.ts';

let llm: ScriptedLlm;
let dataDir: string;
/** The running app, which restart() closes and starts again. */
let hearth: Hearth | undefined;

beforeEach(async () => {
  llm = await startScriptedOllama();
  dataDir = await mkdtemp(path.join(tmpdir(), 'hearth-restart-'));
});
afterEach(async () => {
  await llm.close();
  await rm(dataDir, { recursive: true, force: true });
});
// Registered after the hook above, so the app is closed before its LLM and folder go (hooks run last-registered first).
const startApp = useHearth();

async function start(): Promise<Hearth> {
  hearth = await startApp({ dataDir, llm });
  return hearth;
}

/** Closes the running app and starts a new one on the same data folder. */
async function restart(): Promise<Hearth> {
  await hearth?.close();
  hearth = undefined;
  return start();
}

async function say(server: Hearth, sessionId: string, content: string): Promise<void> {
  const { status, body } = await server.request('POST', `/sessions/${sessionId}/messages`, { content });
  expect(status, JSON.stringify(body)).toBe(200);
}

/**
 * Two sessions: "notes" (titled from its first message, with a tool turn that fills
 * its scratchpad and todo list) and "named" (server_admin, user-set title, pinned).
 */
async function seed(server: Hearth): Promise<{ notes: string; named: string }> {
  llm.script(
    {
      toolCalls: [
        { name: 'scratchpad', arguments: { action: 'write', section: 'groceries', content: 'oat milk, rye bread' } },
        { name: 'todo', arguments: { action: 'set', items: ['Shop', 'Cook dinner'] } },
      ],
    },
    { content: 'Saved your list.', usage: { promptTokens: 400, completionTokens: 5 } },
    { content: 'Disk is fine.', usage: { promptTokens: 200, completionTokens: 4 } },
  );
  const notes = await server.createSession();
  await say(server, notes, 'Remember my groceries');
  const named = await server.createSession('server_admin');
  expect((await server.request('PATCH', `/sessions/${named}`, { title: 'Home server', pinned: true })).status).toBe(200);
  await say(server, named, 'Check the disk');
  return { notes, named };
}

describe('restart on the same data folder', () => {
  it('keeps the session list: titles, profiles, pins and order', async () => {
    const { notes, named } = await seed(await start());
    const before = (await hearth!.request('GET', '/sessions')).body;

    const after = (await (await restart()).request('GET', '/sessions')).body;

    expect(after).toEqual(before);
    expect(after.map((session: any) => [session.session_id, session.title, session.profile_id, session.pinned])).toEqual([
      [named, 'Home server', 'server_admin', true],
      [notes, 'Remember my groceries', 'secretary', false],
    ]);
  });

  it('keeps the display buffer', async () => {
    const { notes } = await seed(await start());
    const before = (await hearth!.request('GET', `/sessions/${notes}`)).body;

    const after = (await (await restart()).request('GET', `/sessions/${notes}`)).body;

    expect(after).toEqual(before);
    expect(after.messages.map((message: any) => message.role)).toEqual(['user', 'assistant', 'tool', 'tool', 'assistant']);
    expect(after.messages[1].tool_calls.map((call: any) => call.name)).toEqual(['scratchpad', 'todo']);
  });

  it('keeps the LLM context and its token count', async () => {
    const { notes } = await seed(await start());
    const before = (await hearth!.request('GET', `/sessions/${notes}/context`)).body;

    const after = (await (await restart()).request('GET', `/sessions/${notes}/context`)).body;

    expect(after).toEqual(before);
    expect(after.context_tokens).toBe(405);
    expect(after.messages).toHaveLength(5);
  });

  it('sends the stored context to the LLM on the next turn', async () => {
    const { notes } = await seed(await start());
    const server = await restart();
    llm.script({ content: 'Oat milk and rye bread.' });

    await say(server, notes, 'What was on my list?');

    const sent = llm.requests.at(-1)!.body.messages.map((message: any) => [message.role, message.content]);
    expect(sent.slice(1)).toEqual([
      ['user', 'Remember my groceries'],
      ['assistant', ''],
      ['tool', expect.stringContaining('groceries')],
      ['tool', expect.stringContaining('Shop')],
      ['assistant', 'Saved your list.'],
      ['user', 'What was on my list?'],
    ]);
  });

  it('keeps a user-set title when the next message arrives', async () => {
    const { named } = await seed(await start());
    const server = await restart();
    llm.script({ content: 'Still fine.' });

    await say(server, named, 'And now?');

    expect((await server.request('GET', `/sessions/${named}`)).body.title).toBe('Home server');
  });

  it('keeps the scratchpad and the todo list', async () => {
    const { notes } = await seed(await start());
    const server = await restart();
    llm.script(
      {
        toolCalls: [
          { name: 'scratchpad', arguments: { action: 'read', section: 'groceries' } },
          { name: 'todo', arguments: { action: 'read' } },
        ],
      },
      { content: 'Here it is.' },
    );

    await say(server, notes, 'Read me my notes');

    const messages = (await server.request('GET', `/sessions/${notes}`)).body.messages;
    const results = messages.filter((message: any) => message.role === 'tool').slice(-2);
    expect(results).toEqual([
      expect.objectContaining({ name: 'scratchpad', success: true, content: 'oat milk, rye bread' }),
      expect.objectContaining({ name: 'todo', success: true, content: expect.stringMatching(/1\. \[ \] Shop\n2\. \[ \] Cook dinner/) }),
    ]);
  });
});
