// Child process: the scripted Ollama server, on its own event loop. The parent tells it over
// IPC how to answer; it reports, per chat request, when the request arrived and when the
// response was flushed, so the parent can subtract the LLM's own time from a turn.
import { AsyncLocalStorage } from 'node:async_hooks';
import diagnosticsChannel from 'node:diagnostics_channel';
import type { IncomingMessage } from 'node:http';
import type { ScriptStep } from '../test/support/scripted-llm.ts';
import { startScriptedOllama } from '../test/support/scripted-ollama.ts';
import { epochNow } from './epoch-time.ts';
import { readTurnTag, stampText, type LlmCommand, type LlmReport, type ReplyPlan } from './llm-protocol.ts';

interface RequestTiming {
  receivedAt: number;
  chat: boolean;
  answer: boolean;
  tag: string | undefined;
}

function report(message: LlmReport): void {
  process.send?.(message);
}

const currentRequest = new AsyncLocalStorage<RequestTiming>();
const timings = new WeakMap<IncomingMessage, RequestTiming>();

// Fires when a request's headers are parsed, before the scripted server reads the body;
// entering the storage here makes the timing visible to the responder of this request.
diagnosticsChannel.subscribe('http.server.request.start', (message) => {
  const { request } = message as { request: IncomingMessage };
  const timing: RequestTiming = { receivedAt: epochNow(), chat: false, answer: false, tag: undefined };
  timings.set(request, timing);
  currentRequest.enterWith(timing);
});

diagnosticsChannel.subscribe('http.server.response.finish', (message) => {
  const finishedAt = epochNow();
  const timing = timings.get((message as { request: IncomingMessage }).request);
  if (!timing?.chat) return;
  // The scripted server keeps every request body; a 2,000-message body is ~1 MB, so let them go.
  llm.requests.length = 0;
  report({ type: 'timing', tag: timing.tag, answer: timing.answer, receivedAt: timing.receivedAt, finishedAt });
});

let plan: ReplyPlan = { chunkCount: 20, delayMs: 0, stamped: false };

function textOf(content: unknown): string {
  return typeof content === 'string' ? content : '';
}

function lastUserText(messages: { role?: string; content?: unknown }[]): string {
  for (let index = messages.length - 1; index >= 0; index--) {
    if (messages[index]?.role === 'user') return textOf(messages[index]?.content);
  }
  return '';
}

/** A cheap prompt-size estimate (4 characters a token), so the server sees realistic usage numbers. */
function promptTokens(messages: { content?: unknown }[]): number {
  let characters = 0;
  for (const message of messages) characters += textOf(message.content).length;
  return Math.ceil(characters / 4);
}

/**
 * The turn's answer call offers the profile's tools and ends with the user's message;
 * anything else (planning, a title, a summary) is an auxiliary call.
 */
function isAnswerCall(body: any, messages: { role?: string }[]): boolean {
  return Array.isArray(body?.tools) && body.tools.length > 0 && messages.at(-1)?.role === 'user';
}

function answer(body: any): ScriptStep {
  const messages: { role?: string; content?: unknown }[] = Array.isArray(body?.messages) ? body.messages : [];
  const answerCall = isAnswerCall(body, messages);
  const timing = currentRequest.getStore();
  if (timing) {
    timing.chat = true;
    timing.answer = answerCall;
    timing.tag = readTurnTag(lastUserText(messages));
  }
  const usage = { promptTokens: promptTokens(messages), completionTokens: plan.chunkCount };
  // Auxiliary calls get a short reply; for planning it means "no plan needed".
  if (!answerCall) return { content: 'DIRECT', usage };
  const stamped = plan.stamped;
  return {
    chunkCount: plan.chunkCount,
    chunkText: stamped
      ? () => stampText(epochNow())
      : plan.chunkCharacters !== undefined
        ? () => 'y'.repeat(plan.chunkCharacters ?? 0)
        : (index) => `word${index} `,
    delayMs: plan.delayMs,
    usage,
  };
}

const llm = await startScriptedOllama({ host: '127.0.0.1', port: 0 });
llm.respondWith((request) => answer(request.body));

process.on('message', (command: LlmCommand) => {
  switch (command.type) {
    case 'configure':
      plan = command.plan;
      report({ id: command.id, type: 'configured' });
      return;
    case 'clock':
      report({ id: command.id, type: 'clock', llmTime: epochNow() });
      return;
  }
});
// The parent is gone (or asked us to go): never outlive it.
process.on('disconnect', () => {
  void llm.close().finally(() => process.exit(0));
});
report({ type: 'ready', url: llm.url });
