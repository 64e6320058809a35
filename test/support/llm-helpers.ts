import { once } from 'node:events';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'vitest';
import type { ChatRequest, CompletionResult, LlmStreamEvent, ToolCall } from '../../src/llm/types.ts';
import type { ScriptedLlm } from './scripted-llm.ts';

export function chatRequest(model: string, overrides: Partial<ChatRequest> = {}): ChatRequest {
  return {
    model,
    messages: [{ role: 'user', content: 'Hello' }],
    signal: new AbortController().signal,
    ...overrides,
  };
}

export async function readAll(events: AsyncIterable<LlmStreamEvent>): Promise<LlmStreamEvent[]> {
  const all: LlmStreamEvent[] = [];
  for await (const event of events) all.push(event);
  return all;
}

/** Reads the stream `start` opens with the signal it is given, aborting that signal at the first text delta. */
export async function readAbortingAtFirstText(start: (signal: AbortSignal) => AsyncIterable<LlmStreamEvent>): Promise<LlmStreamEvent[]> {
  const controller = new AbortController();
  const events: LlmStreamEvent[] = [];
  for await (const event of start(controller.signal)) {
    events.push(event);
    if (event.type === 'text_delta') controller.abort();
  }
  return events;
}

/**
 * Calls `complete` against a loopback server (`origin` is `http://127.0.0.1:<port>`) that takes the request and
 * never answers, aborts the signal once the request has arrived, and gives what `complete` resolved to once the
 * client has also closed its connection (a client that leaves it open makes the test time out).
 */
export async function completeAbortedBeforeHeaders(
  complete: (origin: string, signal: AbortSignal) => Promise<CompletionResult>,
): Promise<CompletionResult> {
  const silent = createServer();
  const arrived = once(silent, 'request') as Promise<[IncomingMessage]>;
  await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
  try {
    const { port } = silent.address() as AddressInfo;
    const controller = new AbortController();
    const result = complete(`http://127.0.0.1:${port}`, controller.signal);
    const [request] = await arrived;
    const closed = once(request.socket, 'close');
    controller.abort();
    const settled = await result;
    await closed;
    return settled;
  } finally {
    silent.closeAllConnections();
    await new Promise((resolve) => silent.close(resolve));
  }
}

/** Both backends' case: complete() gathers a scripted reply's text, thinking, tool calls and usage into one completion. */
export async function expectCompleteGathersReply(server: ScriptedLlm, complete: () => Promise<CompletionResult>): Promise<void> {
  server.script({
    thinking: 'Hmm.',
    content: 'Done.',
    toolCalls: [{ name: 'note', arguments: { text: 'x' } }],
    usage: { promptTokens: 3, completionTokens: 2 },
  });
  expect(await complete()).toEqual({
    ok: true,
    completion: {
      content: 'Done.',
      thinking: 'Hmm.',
      toolCalls: [{ id: expect.any(String), name: 'note', arguments: { text: 'x' } }],
      usage: { promptTokens: 3, completionTokens: 2 },
    },
  });
}

export function joined(events: LlmStreamEvent[], type: 'text_delta' | 'thinking_delta'): string {
  return events.map((event) => (event.type === type ? event.delta : '')).join('');
}

export function toolCallsOf(events: LlmStreamEvent[]): ToolCall[] {
  return events.flatMap((event) => (event.type === 'tool_call' ? [event.call] : []));
}

/**
 * A port nobody listens on, for a server started later (a child process). It is drawn below the
 * kernel's ephemeral range (32768 and up), where the servers the tests start on port 0 land, so
 * none of them can take it between this check and the child's listen.
 */
export async function unusedPort(): Promise<number> {
  for (let attempt = 0; attempt < 100; attempt++) {
    const port = 20_000 + Math.floor(Math.random() * 12_000);
    const probe = createServer();
    const free = await new Promise<boolean>((resolve) => {
      probe.once('error', () => resolve(false));
      probe.listen(port, '0.0.0.0', () => resolve(true));
    });
    if (free) {
      await new Promise((resolve) => probe.close(resolve));
      return port;
    }
  }
  throw new Error('no free port between 20000 and 32000 after 100 tries');
}
