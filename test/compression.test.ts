import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { fitRequest, promptBudget } from '../src/agent/fit-request.ts';
import { estimateRequestTokens } from '../src/agent/token-estimate.ts';
import type { ChatMessage, ToolDefinition } from '../src/llm/types.ts';
import type { Tool } from '../src/tools/tool.ts';
import { type Hearth, useHearth } from './support/hearth-server.ts';
import type { RecordedRequest, ScriptStep } from './support/scripted-llm.ts';
import { waitUntil } from './support/wait-until.ts';

const startApp = useHearth();

// 0.8 × 4,096: a reported count at or above 3,277 tokens triggers compression.
const smallWindow = { OLLAMA_NUM_CTX: '4096', CONTEXT_KEEP_RECENT: '2' };
const overThreshold = { promptTokens: 3_900, completionTokens: 20 };
const underThreshold = { promptTokens: 300, completionTokens: 10 };

const isSummariser = (request: RecordedRequest) => String(request.body?.messages?.[0]?.content ?? '').startsWith('You condense the earlier part');
const summariserRequests = (hearth: Hearth) => hearth.llm.requests.filter(isSummariser);
/** The turns' own calls: not the summariser's, nor any structured-output call (memory extraction). */
const chatRequests = (hearth: Hearth) => hearth.llm.requests.filter((request) => !isSummariser(request) && request.body?.format === undefined);
const lastUserContent = (request: RecordedRequest): string =>
  [...request.body.messages].reverse().find((message: any) => message.role === 'user')?.content ?? '';

/** A prompt's size as the server would send it: all of its JSON, four characters a token (a generous count). */
const requestTokens = (body: any) => Math.ceil(JSON.stringify({ messages: body.messages, tools: body.tools ?? [] }).length / 4);

const lookupTool: Tool = {
  name: 'lookup',
  description: 'Looks a topic up in the notes.',
  parameters: { type: 'object', properties: { topic: { type: 'string' } }, required: ['topic'] },
  execute: async (args: { topic: string }) => `Notes on ${args.topic}: ${'the quick brown fox jumps over the lazy dog '.repeat(15)}end of notes.`,
};

const dumpTool: Tool = {
  name: 'dump_log',
  description: 'Prints the whole server log.',
  parameters: { type: 'object', properties: {} },
  execute: async () => `${'Nov 22 03:00:01 host-a sshd[811]: connection from 10.0.0.7 closed\n'.repeat(900)}LAST LINE: disk /dev/sda1 at 97%`,
};

const toolProfile = `---
id: tooler
name: Tooler
description: Looks things up.
temperature: 0.2
max_iterations: 4
planning_enabled: false
tools: [lookup, dump_log]
---
You look things up.
`;

async function say(hearth: Hearth, sessionId: string, content: string) {
  const { status, body } = await hearth.request('POST', `/sessions/${sessionId}/messages`, { content });
  expect(status, JSON.stringify(body)).toBe(200);
  return body as { content: string; context_tokens: number; max_context_tokens: number };
}

const context = async (hearth: Hearth, sessionId: string) => (await hearth.request('GET', `/sessions/${sessionId}/context`)).body;
const display = async (hearth: Hearth, sessionId: string) => (await hearth.request('GET', `/sessions/${sessionId}`)).body.messages as any[];

/** Every assistant message with tool calls is followed at once by one result per call, in order; no result stands alone. */
function expectToolGroupsIntact(messages: any[], stored: boolean): void {
  for (let index = 0; index < messages.length; index++) {
    const message = messages[index];
    const calls = message.role === 'assistant' ? (message.tool_calls ?? []) : [];
    for (let offset = 0; offset < calls.length; offset++) {
      const result = messages[index + 1 + offset];
      expect(result?.role, `result ${offset + 1} of the calls at ${index}`).toBe('tool');
      if (stored) expect(result.tool_call_id).toBe(calls[offset].id);
      else expect(result.tool_name).toBe(calls[offset].function.name);
    }
    if (message.role === 'tool') {
      let start = index - 1;
      while (start >= 0 && messages[start].role === 'tool') start--;
      expect(messages[start]?.tool_calls?.length ?? 0, `the call of the result at ${index}`).toBeGreaterThanOrEqual(index - start);
    }
  }
}

describe('context compression', () => {
  it('replaces the old turns with one summary, keeps the display history, and sends the summary with the recent turns', async () => {
    const hearth = await startApp({ env: smallWindow });
    hearth.llm.respondWith((request) => {
      if (isSummariser(request)) return { content: '## Current goal\n- Plan the Lisbon trip\n## Key facts\n- Hotel: Casa Azul, booking 4471' };
      const turn = Number(/Question (\d+)/.exec(lastUserContent(request))?.[1]);
      return { content: `Answer ${turn}.`, usage: turn === 4 ? overThreshold : underThreshold };
    });
    const sessionId = await hearth.createSession();
    const socket = await hearth.connect(sessionId);
    for (let turn = 1; turn <= 4; turn++) {
      socket.send({ type: 'message', content: `Question ${turn}` });
      const end = await socket.next('stream_end');
      expect(end.context_tokens).toBe(turn === 4 ? 3_920 : 310);
      expect(end.max_context_tokens).toBe(4096);
    }
    // Post-turn compression, after stream_end, reaches the session's sockets.
    expect(await socket.next('context_compressed')).toEqual({ type: 'context_compressed', messages_before: 8, messages_after: 5 });

    const compressed = await context(hearth, sessionId);
    expect(compressed.messages.map((message: any) => [message.role, message.content.split('\n')[0], message.is_summary ?? false])).toEqual([
      ['user', expect.stringContaining('Summary of the earlier conversation'), true],
      ['user', 'Question 3', false],
      ['assistant', 'Answer 3.', false],
      ['user', 'Question 4', false],
      ['assistant', 'Answer 4.', false],
    ]);
    expect(compressed.messages[0].content).toContain('Hotel: Casa Azul, booking 4471');
    // Until the next call reports usage, the count is an estimate of the compressed context.
    expect(compressed.context_tokens).toBeGreaterThan(0);
    expect(compressed.context_tokens).toBeLessThan(3_277);
    expect(compressed.max_context_tokens).toBe(4096);

    const history = await display(hearth, sessionId);
    expect(history.map((message) => message.content)).toEqual([1, 2, 3, 4].flatMap((turn) => [`Question ${turn}`, `Answer ${turn}.`]));
    expect(history.some((message) => message.is_summary)).toBe(false);

    // The summariser: same model, no tools, the configured temperature, thinking off.
    const [summariser] = summariserRequests(hearth);
    expect(summariser!.body).toMatchObject({ think: false, options: { temperature: 0.3, num_ctx: 4096 } });
    expect(summariser!.body.tools).toBeUndefined();
    expect(summariser!.body.model).toBe(chatRequests(hearth)[0]!.body.model);
    const input = summariser!.body.messages[1].content;
    expect(input).toContain('User: Question 1\nAssistant: Answer 1.\nUser: Question 2\nAssistant: Answer 2.');
    expect(input).not.toContain('Question 3');
    for (const heading of ['Current goal', 'Work state', 'Key facts', 'Outputs', 'Errors']) {
      expect(summariser!.body.messages[0].content).toContain(heading);
    }

    socket.send({ type: 'message', content: 'Question 5' });
    expect((await socket.next('stream_end')).context_tokens).toBe(310);
    const next = chatRequests(hearth).at(-1)!.body.messages;
    expect(next.map((message: any) => [message.role, message.content])).toEqual([
      ['system', expect.any(String)],
      ['user', compressed.messages[0].content],
      ['user', 'Question 3'],
      ['assistant', 'Answer 3.'],
      ['user', 'Question 4'],
      ['assistant', 'Answer 4.'],
      ['user', 'Question 5'],
    ]);
    socket.close();
  });

  it('summarises through the OpenAI-compatible backend the same way', async () => {
    const hearth = await startApp({ backend: 'openai', env: smallWindow });
    hearth.llm.respondWith((request) => {
      if (isSummariser(request)) return { content: '- Asked about the weather twice.' };
      const turn = Number(/Question (\d+)/.exec(lastUserContent(request))?.[1]);
      return { content: `Answer ${turn}.`, usage: turn === 3 ? overThreshold : underThreshold };
    });
    const sessionId = await hearth.createSession();
    const socket = await hearth.connect(sessionId);
    for (let turn = 1; turn <= 3; turn++) {
      socket.send({ type: 'message', content: `Question ${turn}` });
      expect((await socket.next('stream_end')).context_tokens).toBe(turn === 3 ? 3_920 : 310);
    }
    expect(await socket.next('context_compressed')).toEqual({ type: 'context_compressed', messages_before: 6, messages_after: 5 });
    const [summariser] = summariserRequests(hearth);
    expect(summariser!.body).toMatchObject({ model: 'scripted-model', temperature: 0.3 });
    expect(summariser!.body.tools).toBeUndefined();

    socket.send({ type: 'message', content: 'Question 4' });
    await socket.next('stream_end');
    const next = chatRequests(hearth).at(-1)!.body.messages;
    expect(next.map((message: any) => message.content.split('\n')[0])).toEqual([
      expect.any(String),
      expect.stringContaining('Summary of the earlier conversation'),
      'Question 2',
      'Answer 2.',
      'Question 3',
      'Answer 3.',
      'Question 4',
    ]);
    expect(next[1].content).toContain('Asked about the weather twice.');
    socket.close();
  });

  it('compresses before the turn when the new message takes the context over the threshold', async () => {
    const hearth = await startApp({ env: smallWindow });
    hearth.llm.respondWith((request) => {
      if (isSummariser(request)) return { content: '- The person asked three short questions.' };
      // 3,250 is just under the threshold; the next message's own tokens take it over.
      return { content: 'Noted.', usage: { promptTokens: 3_240, completionTokens: 10 } };
    });
    const sessionId = await hearth.createSession();
    for (let turn = 1; turn <= 3; turn++) await say(hearth, sessionId, `Short question ${turn}`);
    expect(summariserRequests(hearth)).toHaveLength(0);

    const socket = await hearth.connect(sessionId);
    socket.send({ type: 'message', content: `A longer question: ${'please look at the attached notes again '.repeat(8)}` });
    await socket.next('stream_start');
    expect(await socket.next('context_compressed')).toEqual({ type: 'context_compressed', messages_before: 7, messages_after: 4 });
    await socket.next('stream_end');
    // The event came inside the run, before the turn's LLM call, which already carries the summary.
    expect(socket.types().indexOf('context_compressed')).toBeLessThan(socket.types().indexOf('stream_end'));
    const request = chatRequests(hearth).at(-1)!.body.messages;
    expect(request.map((message: any) => message.role)).toEqual(['system', 'user', 'user', 'assistant', 'user']);
    expect(request[1].content).toContain('The person asked three short questions.');
    expect(request[2].content).toBe('Short question 3');
    socket.close();
  });

  it('never separates a tool call from its results, and truncates long arguments and results for the summariser', async () => {
    const hearth = await startApp({ env: smallWindow, tools: [lookupTool, dumpTool], profiles: { tooler: toolProfile } });
    const longTopic = `the ${'very '.repeat(80)}long topic`;
    hearth.llm.respondWith((request) => {
      if (isSummariser(request)) return { content: '- Looked up topics 1 to 3.' };
      const last = request.body.messages.at(-1);
      const turn = Number(/Topic (\d+)/.exec(lastUserContent(request))?.[1]);
      if (last.role === 'user') {
        return { toolCalls: [{ name: 'lookup', arguments: { topic: `${turn} ${longTopic}` } }, { name: 'lookup', arguments: { topic: `${turn}b` } }] };
      }
      // Even turns take a second round of calls.
      const question = request.body.messages.findLastIndex((message: any) => message.role === 'user' && message.content === `Topic ${turn}`);
      const rounds = request.body.messages.slice(question).filter((message: any) => message.tool_calls).length;
      if (turn % 2 === 0 && rounds === 1) return { toolCalls: [{ name: 'lookup', arguments: { topic: `${turn}c` } }] };
      return { content: `Done with topic ${turn}.`, usage: turn >= 4 ? overThreshold : underThreshold };
    });
    const sessionId = await hearth.createSession('tooler');
    const socket = await hearth.connect(sessionId);
    for (let turn = 1; turn <= 6; turn++) {
      socket.send({ type: 'message', content: `Topic ${turn}` });
      await socket.next('stream_end');
      if (turn >= 4) await socket.next('context_compressed');
      expectToolGroupsIntact((await context(hearth, sessionId)).messages, true);
    }
    for (const request of chatRequests(hearth)) expectToolGroupsIntact(request.body.messages, false);

    const stored = (await context(hearth, sessionId)).messages;
    expect(stored.filter((message: any) => message.is_summary)).toHaveLength(1);
    expect(stored.filter((message: any) => message.role === 'user' && !message.is_summary).map((message: any) => message.content)).toEqual([
      'Topic 5',
      'Topic 6',
    ]);
    // The display history keeps every call and result.
    const history = await display(hearth, sessionId);
    expect(history.filter((message) => message.role === 'tool')).toHaveLength(6 * 2 + 3);
    expectToolGroupsIntact(history, true);

    const input = summariserRequests(hearth)[0]!.body.messages[1].content as string;
    const call = input.split('\n').find((line) => line.startsWith('Assistant called lookup({"topic":"1 the very'))!;
    expect(call.length).toBeLessThan(300);
    expect(call).toMatch(/… \[\d+ more characters\]\)$/);
    const result = input.split('\n').find((line) => line.startsWith('Result of lookup: Notes on 1 the very'))!;
    expect(result.length).toBeLessThan(500);
    expect(result).toMatch(/… \[\d+ more characters\]$/);
    socket.close();
  });

  it('leaves the context unchanged and the turn unaffected when the summariser fails', async () => {
    const hearth = await startApp({ env: smallWindow });
    hearth.llm.respondWith((request) => {
      if (isSummariser(request)) return { status: 500, errorMessage: 'the model crashed' };
      return { content: `Answer to ${lastUserContent(request)}.`, usage: overThreshold };
    });
    const sessionId = await hearth.createSession();
    const socket = await hearth.connect(sessionId);
    for (let turn = 1; turn <= 4; turn++) {
      socket.send({ type: 'message', content: `Question ${turn}` });
      const end = await socket.next('stream_end');
      expect(end.content).toBe(`Answer to Question ${turn}.`);
    }
    // Turns 3 and 4 each tried before (pre-turn) and after; wait for the last attempt to be answered.
    await waitUntil(() => summariserRequests(hearth).length === 4 && summariserRequests(hearth).every((request) => request.completed));
    expect(socket.ofType('context_compressed')).toEqual([]);
    expect(socket.ofType('error')).toEqual([]);

    const stored = await context(hearth, sessionId);
    expect(stored.messages.map((message: any) => message.content)).toEqual(
      [1, 2, 3, 4].flatMap((turn) => [`Question ${turn}`, `Answer to Question ${turn}.`]),
    );
    expect(stored.context_tokens).toBe(3_920);
    expect(chatRequests(hearth).at(-1)!.body.messages).toHaveLength(1 + 7);
    socket.close();
  });

  it('feeds the earlier summary into the next one, so only one summary is ever in the context', async () => {
    const hearth = await startApp({ env: smallWindow });
    let summaries = 0;
    hearth.llm.respondWith((request) => {
      if (isSummariser(request)) return { content: `Summary number ${++summaries}: the trip is to Lisbon, hotel booking 4471.` };
      const turn = Number(/Question (\d+)/.exec(lastUserContent(request))?.[1]);
      return { content: `Answer ${turn}.`, usage: turn === 4 || turn === 6 ? overThreshold : underThreshold };
    });
    const sessionId = await hearth.createSession();
    const socket = await hearth.connect(sessionId);
    for (let turn = 1; turn <= 6; turn++) {
      socket.send({ type: 'message', content: `Question ${turn}` });
      await socket.next('stream_end');
      if (turn === 4 || turn === 6) await socket.next('context_compressed');
    }
    const [first, second] = summariserRequests(hearth);
    expect(summariserRequests(hearth)).toHaveLength(2);
    const secondInput = second!.body.messages[1].content as string;
    expect(secondInput).toContain('Previous summary:\nSummary number 1: the trip is to Lisbon, hotel booking 4471.');
    expect(secondInput).toContain('User: Question 3\nAssistant: Answer 3.\nUser: Question 4\nAssistant: Answer 4.');
    expect(secondInput).not.toContain('Question 1');
    expect(first!.body.messages[1].content).not.toContain('Previous summary');

    const stored = (await context(hearth, sessionId)).messages;
    const summaryMessages = stored.filter((message: any) => message.is_summary);
    expect(summaryMessages).toHaveLength(1);
    expect(summaryMessages[0].content).toContain('Summary number 2');
    expect(stored.map((message: any) => message.content).slice(1)).toEqual(['Question 5', 'Answer 5.', 'Question 6', 'Answer 6.']);
    expect(socket.ofType('context_compressed')).toEqual([
      { type: 'context_compressed', messages_before: 8, messages_after: 5 },
      { type: 'context_compressed', messages_before: 9, messages_after: 5 },
    ]);
    socket.close();
  });

  it('cuts a huge tool result down so the request fits, and the next turn compresses it away', async () => {
    const hearth = await startApp({ env: smallWindow, tools: [lookupTool, dumpTool], profiles: { tooler: toolProfile } });
    hearth.llm.respondWith((request) => {
      if (isSummariser(request)) return { content: '- The log showed /dev/sda1 at 97%.' };
      const last = request.body.messages.at(-1);
      if (last.role === 'user' && last.content === 'Show me the log') return { toolCalls: [{ name: 'dump_log', arguments: {} }] };
      return { content: 'The disk is nearly full.' };
    });
    const sessionId = await hearth.createSession('tooler');
    const reply = await say(hearth, sessionId, 'Show me the log');
    expect(reply.content).toBe('The disk is nearly full.');

    const [, second] = chatRequests(hearth);
    expect(requestTokens(second!.body)).toBeLessThanOrEqual(4096);
    const result = second!.body.messages.at(-1);
    expect(result.role).toBe('tool');
    expect(result.content).toMatch(/\[… truncated \d+ characters to fit the context window\]/);
    // Head and tail survive: the start of the log and its last line.
    expect(result.content.startsWith('Nov 22 03:00:01 host-a sshd')).toBe(true);
    expect(result.content.endsWith('LAST LINE: disk /dev/sda1 at 97%')).toBe(true);
    // Only the request was cut: both buffers keep the whole result.
    const full = (await dumpTool.execute({}, undefined as never)) as string;
    expect((await display(hearth, sessionId)).find((message) => message.role === 'tool').content).toBe(full);
    expect((await context(hearth, sessionId)).messages.find((message: any) => message.role === 'tool').content).toBe(full);
    // The backend saw a cut request; the count reflects what the context holds.
    expect(reply.context_tokens).toBeGreaterThan(4096);

    await say(hearth, sessionId, 'Is it still full?');
    const latest = chatRequests(hearth).at(-1)!.body;
    expect(requestTokens(latest)).toBeLessThanOrEqual(4096);
    expect(latest.messages.map((message: any) => message.role)).toEqual(['system', 'user', 'user']);
    expect(latest.messages[1].content).toContain('/dev/sda1 at 97%');
    const input = summariserRequests(hearth)[0]!.body.messages[1].content as string;
    expect(input.length).toBeLessThan(2_000);
    expect(input).toContain('Result of dump_log: Nov 22 03:00:01');
  });

  it('does not hold up stream_end or the next message while it compresses after a turn', async () => {
    const hearth = await startApp({ env: smallWindow });
    hearth.llm.respondWith((request): ScriptStep => {
      if (isSummariser(request)) return { content: '- Earlier: questions 1 and 2.', chunkSize: 1_000, delayMs: 500 };
      const turn = Number(/Question (\d+)/.exec(lastUserContent(request))?.[1]);
      return { content: `Answer ${turn}.`, usage: turn === 3 ? overThreshold : underThreshold };
    });
    const sessionId = await hearth.createSession();
    const socket = await hearth.connect(sessionId);
    for (let turn = 1; turn <= 3; turn++) {
      socket.send({ type: 'message', content: `Question ${turn}` });
      await socket.next('stream_end');
    }
    expect(summariserRequests(hearth).every((request) => !request.completed)).toBe(true);

    socket.send({ type: 'message', content: 'Question 4' });
    await socket.next('stream_start');
    const compressed = await socket.next('context_compressed');
    expect(compressed).toEqual({ type: 'context_compressed', messages_before: 6, messages_after: 5 });
    await socket.next('stream_end');
    expect(socket.ofType('error')).toEqual([]);
    // The new turn read the context only once the compression had finished.
    const fourth = chatRequests(hearth).at(-1)!.body.messages;
    expect(fourth.map((message: any) => message.content.split('\n')[0])).toEqual([
      expect.any(String),
      expect.stringContaining('Summary of the earlier conversation'),
      'Question 2',
      'Answer 2.',
      'Question 3',
      'Answer 3.',
      'Question 4',
    ]);
    socket.close();
  });

  it('lets a stop end a turn that is waiting for the previous compression, which is then abandoned', async () => {
    const hearth = await startApp({ env: smallWindow });
    hearth.llm.respondWith((request): ScriptStep => {
      if (isSummariser(request)) return { content: '- Never arrives.', chunkSize: 1_000, delayMs: 5_000 };
      const turn = Number(/Question (\d+)/.exec(lastUserContent(request))?.[1]);
      return { content: `Answer ${turn}.`, usage: turn === 3 ? overThreshold : underThreshold };
    });
    const sessionId = await hearth.createSession();
    const socket = await hearth.connect(sessionId);
    for (let turn = 1; turn <= 3; turn++) {
      socket.send({ type: 'message', content: `Question ${turn}` });
      await socket.next('stream_end');
    }
    await waitUntil(() => summariserRequests(hearth).length === 1);

    socket.send({ type: 'message', content: 'Question 4' });
    await socket.next('stream_start');
    socket.send({ type: 'stop' });
    expect(await socket.next('stream_stopped', 2_000)).toEqual({ type: 'stream_stopped', content: '', length: 0, reason: 'user' });
    expect((await hearth.llm.waitForDisconnect()).body.messages[0].content).toMatch(/^You condense/);
    expect(socket.ofType('context_compressed')).toEqual([]);
    const stored = (await context(hearth, sessionId)).messages;
    expect(stored.some((message: any) => message.is_summary)).toBe(false);
    expect(stored.map((message: any) => message.content).slice(0, 7)).toEqual([
      ...[1, 2, 3].flatMap((turn) => [`Question ${turn}`, `Answer ${turn}.`]),
      'Question 4',
    ]);
    socket.close();
  });
});

describe('fitting a request to the window', () => {
  const system: ChatMessage = { role: 'system', content: `You are helpful. ${'Be brief. '.repeat(200)}` };
  const tools: ToolDefinition[] = [{ name: 'lookup', description: 'Looks a topic up.', parameters: { type: 'object', properties: {} } }];
  const toolTurn = (turn: number, resultLength: number): ChatMessage[] => [
    { role: 'user', content: `Question ${turn}: ${'what about it? '.repeat(8)}` },
    { role: 'assistant', content: '', thinking: 'Let me look. '.repeat(10), tool_calls: [{ id: `call_${turn}`, name: 'lookup', arguments: { topic: `topic ${turn}` } }] },
    { role: 'tool', content: `Result ${turn}: ${'x'.repeat(resultLength)}`, tool_call_id: `call_${turn}`, name: 'lookup' },
    { role: 'assistant', content: `Answer ${turn}: ${'it is fine. '.repeat(10)}` },
  ];

  it('leaves a request that fits as it is', () => {
    const messages = [system, ...toolTurn(1, 100)];
    const fitted = fitRequest(messages, tools, 4096);
    expect(fitted.messages).toBe(messages);
    expect(fitted.cut).toBe(false);
    expect(fitted.estimatedTokens).toBe(estimateRequestTokens(messages, tools));
  });

  it('cuts the largest content first, only as far as needed, and never a system message', () => {
    const messages = [system, ...toolTurn(1, 40_000), ...toolTurn(2, 1_000), { role: 'user' as const, content: 'And now?' }];
    const fitted = fitRequest(messages, tools, 4096);
    expect(fitted.cut).toBe(true);
    expect(fitted.fittedTokens).toBeLessThanOrEqual(promptBudget(4096));
    expect(fitted.fittedTokens).toBeGreaterThan(promptBudget(4096) - 100);
    expect(fitted.messages[0]).toBe(system);
    expect(fitted.messages[3]!.content).toMatch(/^Result 1: x+\n\[… truncated \d+ characters to fit the context window\]\nx+$/);
    // The smaller result and everything else are whole; the stored messages are untouched.
    expect(fitted.messages.slice(4)).toEqual(messages.slice(4).map(({ thinking: _thinking, ...message }) => message));
    expect(messages[3]!.content).toHaveLength('Result 1: '.length + 40_000);
  });

  it('leaves out whole old turns as a last resort, keeping every tool call with its results', () => {
    const messages = [system, ...Array.from({ length: 200 }, (_, index) => toolTurn(index + 1, 150)).flat(), { role: 'user' as const, content: 'Last question' }];
    const fitted = fitRequest(messages, tools, 4096);
    expect(fitted.fittedTokens).toBeLessThanOrEqual(promptBudget(4096));
    expect(fitted.messages[0]).toBe(system);
    expect(fitted.messages[1]!.content).toMatch(/^\[\d+ earlier messages were left out of this request to fit the context window\.\]$/);
    expect(fitted.messages.at(-1)!.content).toBe('Last question');
    expect(fitted.messages[2]!.content).toMatch(/^Question \d+:/);
    expectToolGroupsIntact(fitted.messages, true);
  });
});

describe('a long conversation on a small window', () => {
  it('runs 300 turns on a 4,096-token window without one request over it, and the display history keeps all 300', async () => {
    const secretary = await readFile('profiles/secretary.md', 'utf8');
    const profile = secretary
      .replace(/^id: secretary$/m, 'id: long_talk')
      .replace(/^planning_enabled: true$/m, 'planning_enabled: false')
      .replace(/^tools:\n/m, 'tools:\n  - lookup\n  - dump_log\n');
    const hearth = await startApp({ env: smallWindow, tools: [lookupTool, dumpTool], profiles: { long_talk: profile } });

    const reported = new Map<RecordedRequest, { promptTokens: number; completionTokens: number }>();
    let summaries = 0;
    hearth.llm.respondWith((request) => {
      const answer = (step: ScriptStep & { content: string }): ScriptStep => {
        // The backend reports what it was sent, as Ollama does.
        const usage = { promptTokens: requestTokens(request.body), completionTokens: Math.ceil(step.content.length / 4) };
        reported.set(request, usage);
        return { ...step, usage };
      };
      if (isSummariser(request)) return answer({ content: `## Current goal\n- Keep the home servers running (summary ${++summaries})\n## Key facts\n- host-a is 10.0.0.7` });
      const last = request.body.messages.at(-1);
      const turn = Number(/^Turn (\d+):/.exec(lastUserContent(request))?.[1]);
      if (last.role === 'user' && turn % 75 === 0) return answer({ content: '', toolCalls: [{ name: 'dump_log', arguments: {} }] });
      if (last.role === 'user' && turn % 10 === 0) {
        return answer({ content: '', toolCalls: [{ name: 'lookup', arguments: { topic: `backup ${turn}` } }, { name: 'lookup', arguments: { topic: `disk ${turn}` } }] });
      }
      return answer({ content: `Turn ${turn} done: checked /srv/backup/${turn}.tar on host-a and it looks fine; nothing else to do for now.` });
    });

    const sessionId = await hearth.createSession('long_talk');
    const turns = 300;
    let cutTurns = 0;
    for (let turn = 1; turn <= turns; turn++) {
      const first = hearth.llm.requests.length;
      const reply = await say(hearth, sessionId, `Turn ${turn}: please check the backup of /srv/data/project-${turn} on host-a (10.0.0.7) and tell me whether the archive is complete and readable.`);
      expect(reply.content).toMatch(new RegExp(`^Turn ${turn} done`));
      // The session's count is what the backend reported for the turn's last call, unless a request had to be cut.
      const own = hearth.llm.requests.slice(first).filter((request) => !isSummariser(request));
      const usage = reported.get(own.at(-1)!)!;
      if (own.some((request) => JSON.stringify(request.body.messages).includes('to fit the context window]'))) {
        cutTurns += 1;
        expect(reply.context_tokens).toBeGreaterThanOrEqual(usage.promptTokens + usage.completionTokens);
      } else {
        expect(reply.context_tokens).toBe(usage.promptTokens + usage.completionTokens);
      }
    }

    const requests = hearth.llm.requests;
    expect(requests.filter((request) => !isSummariser(request)).length).toBeGreaterThanOrEqual(turns);
    expect(summaries).toBeGreaterThan(10);
    // The four dump_log turns (75, 150, 225, 300) had a request cut to fit.
    expect(cutTurns).toBe(4);
    for (const request of requests) {
      const usage = reported.get(request)!;
      expect(usage.promptTokens).toBe(requestTokens(request.body));
      expect(usage.promptTokens + usage.completionTokens).toBeLessThanOrEqual(4096);
      if (!isSummariser(request)) expectToolGroupsIntact(request.body.messages, false);
    }

    const history = await display(hearth, sessionId);
    const questions = history.filter((message) => message.role === 'user').map((message) => Number(/^Turn (\d+):/.exec(message.content)?.[1]));
    expect(questions).toEqual(Array.from({ length: turns }, (_, index) => index + 1));
    expect(history.filter((message) => message.role === 'assistant' && !message.tool_calls)).toHaveLength(turns);
    expect(history.some((message) => message.is_summary)).toBe(false);

    const stored = await context(hearth, sessionId);
    expect(stored.messages.filter((message: any) => message.is_summary)).toHaveLength(1);
    expect(stored.messages.length).toBeLessThan(30);
    expectToolGroupsIntact(stored.messages, true);
  }, 60_000);
});
