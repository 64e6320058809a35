import type { FastifyReply } from 'fastify';
import { agentErrorCode, type TurnOutcome } from '../../agent/turn.ts';
import { ApiError, errorStatus, type ErrorCode } from '../../errors.ts';
import type { Sessions } from '../../sessions/sessions.ts';
import { CompletionChunks, type CompletionIdentity } from './completion-chunks.ts';
import { openAiError } from './openai-errors.ts';

/** How often a stream that has nothing to say (a call waiting for a person) says it is alive, so proxies and clients keep it open. */
export const defaultKeepAliveMs = 15_000;

interface AnswerOptions {
  reply: FastifyReply;
  sessions: Pick<Sessions, 'follow' | 'stop'>;
  sessionId: string;
  identity: CompletionIdentity;
}

interface StreamOptions extends AnswerOptions {
  /** `defaultKeepAliveMs` when absent. */
  keepAliveMs?: number;
}

/**
 * The run's events as OpenAI's server-sent chunks, until the run ends; a client that goes away
 * stops the run, as Stop in the page does (docs/openai-compatible.md, "Streaming").
 */
export function streamAnswer({ reply, sessions, sessionId, identity, keepAliveMs = defaultKeepAliveMs }: StreamOptions): FastifyReply {
  reply.hijack();
  const response = reply.raw;
  response.writeHead(200, {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache',
    'x-content-type-options': 'nosniff',
    // nginx and its kin pass each chunk on at once instead of buffering the answer.
    'x-accel-buffering': 'no',
  });
  const chunks = new CompletionChunks(identity);
  // The chunks of one turn of the event loop go out as one write: an instant model's deltas arrive many at a time.
  let corked = false;
  const send = (data: unknown) => {
    if (!corked) {
      corked = true;
      response.cork();
      process.nextTick(() => {
        corked = false;
        response.uncork();
      });
    }
    response.write(`data: ${JSON.stringify(data)}\n\n`);
  };
  send(chunks.opening());
  let ended = false;
  let unfollow: (() => void) | undefined;
  const keepAlive = setInterval(() => response.write(': still working\n\n'), keepAliveMs);
  const end = () => {
    ended = true;
    clearInterval(keepAlive);
    unfollow?.();
  };
  response.on('close', () => {
    if (ended) return;
    end();
    sessions.stop(sessionId);
  });
  unfollow = sessions.follow(sessionId, (event) => {
    if (ended) return;
    const step = chunks.step(event);
    for (const delta of step.deltas) send(chunks.chunk(delta));
    if (!step.end) return;
    const { error } = step.end;
    send(error ? openAiError(statusOf(error.code), error.code, error.message) : chunks.closing());
    response.end('data: [DONE]\n\n');
    end();
  });
  if (ended) unfollow();
  return reply;
}

/** The whole answer once the run ends, as one `chat.completion`; a client that goes away stops the run. */
export async function wholeAnswer({ reply, sessions, sessionId, identity, outcome }: AnswerOptions & { outcome: Promise<TurnOutcome> }) {
  const response = reply.raw;
  const gone = () => {
    if (!response.writableEnded) sessions.stop(sessionId);
  };
  response.on('close', gone);
  const ended = await outcome.finally(() => response.off('close', gone));
  if (ended.status === 'failed') throw new ApiError(agentErrorCode(ended.error.code), ended.error.message);
  if (ended.status === 'refused') throw new ApiError(ended.error.code, ended.error.message);
  return {
    id: identity.id,
    object: 'chat.completion',
    created: identity.created,
    model: identity.model,
    choices: [{ index: 0, message: { role: 'assistant', content: ended.content }, finish_reason: 'stop' }],
  };
}

function statusOf(code: string): number {
  return code in errorStatus ? errorStatus[code as ErrorCode] : 500;
}
