import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ChatRequest, LlmStreamEvent, ToolCall } from '../../src/llm/types.ts';

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

export function joined(events: LlmStreamEvent[], type: 'text_delta' | 'thinking_delta'): string {
  return events.map((event) => (event.type === type ? event.delta : '')).join('');
}

export function toolCallsOf(events: LlmStreamEvent[]): ToolCall[] {
  return events.flatMap((event) => (event.type === 'tool_call' ? [event.call] : []));
}

/** A loopback port nobody listens on. */
export async function unusedPort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as AddressInfo;
  await new Promise((resolve) => probe.close(resolve));
  return port;
}
