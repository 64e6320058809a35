import { describe, expect, it } from 'vitest';
import type { AgentEvent } from '../../src/protocol/events.ts';
import { conversationOf, maxSeededCharacters, seededContent, type ChatCompletionBody } from '../../src/server/openai-compatible/chat-request.ts';
import { CompletionChunks } from '../../src/server/openai-compatible/completion-chunks.ts';
import { modelId, parseModelId } from '../../src/server/openai-compatible/model-ids.ts';
import { asOpenAiError } from '../../src/server/openai-compatible/openai-errors.ts';

// The OpenAI front door's pure parts (issue 37): how a request's messages key its session and make
// the turn, how a run's events become chunks, model ids, and errors in OpenAI's shape.

type Messages = ChatCompletionBody['messages'];

function conversation(messages: Messages, user?: unknown) {
  const parsed = conversationOf('person-1', { messages, ...(user !== undefined && { user }) });
  if (!parsed.ok) throw new Error(parsed.message);
  return parsed.conversation;
}

function refusal(messages: Messages): string {
  const parsed = conversationOf('person-1', { messages });
  if (parsed.ok) throw new Error('taken');
  return parsed.message;
}

describe('conversation keys', () => {
  const opening: Messages = [
    { role: 'system', content: 'Be brief.' },
    { role: 'user', content: 'Hi' },
  ];

  it('keys a chat by its system and first user messages, so its next request finds the same session', () => {
    const first = conversation(opening);
    const next = conversation([...opening, { role: 'assistant', content: 'Hello.' }, { role: 'user', content: 'And then?' }]);
    expect(next.key).toBe(first.key);
    expect(first.key).toMatch(/^openai-chat:person-1:[0-9a-f]{32}$/);
    expect(first).toMatchObject({ continues: false, content: 'Hi', earlier: '' });
    expect(next).toMatchObject({ continues: true, content: 'And then?', earlier: 'user: Hi\n\nassistant: Hello.', title: 'Hi' });
  });

  it('tells chats apart by their system message, first message and person', () => {
    const key = conversation(opening).key;
    expect(conversation([{ role: 'system', content: 'Be long.' }, opening[1]!]).key).not.toBe(key);
    expect(conversation([opening[0]!, { role: 'user', content: 'Hello' }]).key).not.toBe(key);
    const otherPerson = conversationOf('person-2', { messages: opening });
    expect(otherPerson.ok && otherPerson.conversation.key).not.toBe(key);
  });

  it('keys by the user field when given, one session per that user, continued from the first message', () => {
    const kitchen = conversation([{ role: 'user', content: 'Lights?' }], 'kitchen');
    expect(kitchen).toMatchObject({ key: 'openai:person-1:kitchen', continues: true });
    expect(conversation([{ role: 'user', content: 'Oven?' }], 'kitchen').key).toBe(kitchen.key);
    expect(conversation([{ role: 'user', content: 'Oven?' }], '').key).toMatch(/^openai-chat:/);
    const detailed = conversationOf('person-1', { messages: [{ role: 'user', content: 'Oven?' }], user: { name: 'Ann' } });
    expect(detailed.ok && detailed.conversation.key).toMatch(/^openai-chat:/);
    expect(conversationOf('person-1', { messages: [{ role: 'user', content: 'Oven?' }], user: 'x'.repeat(257) })).toMatchObject({ ok: false, message: '"user" may hold up to 256 characters.' });
  });

  it('takes text parts joined and image data URLs; refuses fetched images, other parts, and a last message that is not the person’s', () => {
    const png = 'data:image/png;base64,iVBORw0KGgo=';
    const parts = conversation([
      {
        role: 'user',
        content: [
          { type: 'text', text: 'What is' },
          { type: 'image_url', image_url: { url: png } },
          { type: 'text', text: 'this?' },
        ],
      },
    ]);
    expect(parts).toMatchObject({ content: 'What is\nthis?', images: [png] });
    expect(conversation([{ role: 'user', content: [{ type: 'image_url', image_url: { url: png } }] }]).content).toBe('(an image)');
    expect(refusal([{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'https://example.com/a.png' } }] }])).toMatch(/data: URLs/);
    expect(refusal([{ role: 'user', content: [{ type: 'input_audio' }] }])).toMatch(/"input_audio" are not taken/);
    expect(refusal([{ role: 'user', content: 'Hi' }, { role: 'assistant', content: 'Hello' }])).toMatch(/last message must be the person's/);
    expect(refusal([{ role: 'user', content: '  ' }])).toMatch(/has no text/);
  });

  it("seeds a session that starts mid-conversation with the earlier messages, the newest kept when they are long", () => {
    const seeded = conversation([
      { role: 'user', content: 'Begun elsewhere' },
      { role: 'assistant', content: 'By another model' },
      { role: 'user', content: 'Go on' },
    ]);
    expect(seededContent(seeded)).toBe(
      "[The conversation so far, from the chat app; Hearth has no record of it]\nuser: Begun elsewhere\n\nassistant: By another model\n[The person's new message]\nGo on",
    );
    expect(seededContent(conversation([{ role: 'user', content: 'Only this' }]))).toBe('Only this');
    const long = conversation([
      { role: 'user', content: 'a'.repeat(maxSeededCharacters) },
      { role: 'assistant', content: 'the latest words' },
      { role: 'user', content: 'Go on' },
    ]);
    expect(long.earlier).toHaveLength(maxSeededCharacters + 1);
    expect(long.earlier.endsWith('assistant: the latest words')).toBe(true);
  });
});

describe('chunks from a run’s events', () => {
  const identity = { id: 'chatcmpl-1', model: 'hearth/secretary', created: 1_700_000_000 };
  const deltas = (events: AgentEvent[]) => {
    const chunks = new CompletionChunks(identity);
    return events.map((event) => chunks.step(event));
  };
  const asker = { id: 'p1', name: 'Ann' };
  const waiting: AgentEvent = {
    type: 'approval_required',
    call_id: 'c1',
    tool: 'terminal',
    args: {},
    subject: 'rm -rf /tmp/x',
    reason: 'rule terminal',
    expires_at: '',
    is_subagent: false,
    asked_by: asker,
    deciders: [asker],
  };

  it('streams the answer as content and the reasoning and tools as reasoning_content, and ends with stop', () => {
    const chunks = new CompletionChunks(identity);
    expect(chunks.opening()).toEqual({ ...identity, object: 'chat.completion.chunk', choices: [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }] });
    expect(
      deltas([
        { type: 'stream_start' },
        { type: 'thinking_delta', delta: 'Hmm' },
        { type: 'tool_started', call_id: 'c0', tool: 'web_search', args: {}, is_subagent: false },
        { type: 'tool_call', call_id: 'c0', tool: 'web_search', args: {}, result: 'secret result', success: true, is_subagent: false },
        { type: 'stream_delta', delta: 'Hel' },
        { type: 'stream_delta', delta: 'lo' },
        { type: 'stream_end', content: 'Hello', length: 5, context_tokens: 1, max_context_tokens: 2 },
      ]),
    ).toEqual([
      { deltas: [] },
      { deltas: [{ reasoning_content: 'Hmm' }] },
      { deltas: [{ reasoning_content: '\n⚙ web_search\n' }] },
      { deltas: [] },
      { deltas: [{ content: 'Hel' }] },
      { deltas: [{ content: 'lo' }] },
      { deltas: [], end: {} },
    ]);
    expect(chunks.closing().choices).toEqual([{ index: 0, delta: {}, finish_reason: 'stop' }]);
  });

  it('says in the content that a call waits and how it was decided; a rule’s decision is not told', () => {
    expect(
      deltas([
        waiting,
        { type: 'approval_resolved', call_id: 'c1', decision: 'deny', by: 'user', remember: 'once', decider: asker, via: 'page' },
        { type: 'approval_resolved', call_id: 'c2', decision: 'allow', by: 'rule', remember: 'once' },
      ]),
    ).toEqual([
      { deltas: [{ content: "\n\n⏳ Waiting for approval: terminal `rm -rf /tmp/x` — decide in Hearth's page or Telegram.\n\n" }] },
      { deltas: [{ content: '⛔ Denied by Ann.\n\n' }] },
      { deltas: [] },
    ]);
  });

  it('names the deciders when the asker may not decide, and keeps a subject with backticks one code span', () => {
    const [step] = deltas([{ ...waiting, subject: 'echo `id`', deciders: [{ id: 'p2', name: 'Bo' }] }]);
    expect(step!.deltas[0]!.content).toBe("\n\n⏳ Waiting for approval: terminal `` echo `id` `` — decide in Hearth's page or Telegram (Bo).\n\n");
  });

  it('ends with the error a failed run reports, and at a stop', () => {
    expect(
      deltas([
        { type: 'error', code: 'llm_unreachable', message: 'Ollama is not running.' },
        { type: 'session_sync', running: false },
      ]),
    ).toEqual([{ deltas: [] }, { deltas: [], end: { error: { code: 'llm_unreachable', message: 'Ollama is not running.' } } }]);
    expect(deltas([{ type: 'stream_stopped', content: 'Part', length: 4, reason: 'user' }])).toEqual([{ deltas: [], end: {} }]);
  });
});

describe('model ids and errors', () => {
  it('names a profile and a profile with a model, and reads them back', () => {
    expect(modelId({ profileId: 'secretary' })).toBe('hearth/secretary');
    expect(modelId({ profileId: 'secretary', model: 'llama3.2:3b' })).toBe('hearth/secretary:llama3.2:3b');
    expect(parseModelId('hearth/secretary:llama3.2:3b')).toEqual({ profileId: 'secretary', model: 'llama3.2:3b' });
    expect(parseModelId('hearth/secretary')).toEqual({ profileId: 'secretary' });
    for (const id of ['gpt-4o', 'hearth/', 'hearth/:x', 'hearth/secretary:']) expect(parseModelId(id)).toBeUndefined();
  });

  it("turns Hearth's error bodies into OpenAI's", () => {
    expect(JSON.parse(asOpenAiError(401, JSON.stringify({ error: { code: 'unauthorized', message: 'Who?', sign_in: [] } }))!)).toEqual({
      error: { message: 'Who?', type: 'authentication_error', code: 'invalid_api_key' },
    });
    expect(JSON.parse(asOpenAiError(404, JSON.stringify({ error: { code: 'model_not_found', message: 'No.' } }))!).error.type).toBe('invalid_request_error');
    expect(JSON.parse(asOpenAiError(502, JSON.stringify({ error: { code: 'llm_unreachable', message: 'Down.' } }))!).error.type).toBe('server_error');
    expect(asOpenAiError(500, 'not json')).toBeUndefined();
  });
});
