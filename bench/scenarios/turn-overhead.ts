// Scenarios 1 and 2: whole-turn time at the client minus the LLM's own time.
import { epochNow } from '../epoch-time.ts';
import { createSession, SessionSocket } from '../hearth-client.ts';
import type { LlmProcess } from '../llm-process.ts';
import { turnTagText } from '../llm-protocol.ts';
import type { ScenarioResult } from '../report.ts';
import { median, milliseconds, percentile } from '../statistics.ts';
import type { BenchContext } from './bench-context.ts';

const instantReply = { chunkCount: 20, delayMs: 0, stamped: false };

interface TurnSample {
  turnMs: number;
  llmMs: number;
  /** LLM calls made before the answer finished: the answer, plus planning when it runs. */
  llmCalls: number;
  overheadMs: number;
}

/** One turn: `message` sent → `stream_end` received, and the LLM's share of it. */
async function measureTurn(socket: SessionSocket, llm: LlmProcess, tag: string): Promise<TurnSample> {
  const ended = socket.next('stream_end', 30_000);
  const sentAt = epochNow();
  socket.send({ type: 'message', content: `Please give me a short status update. ${turnTagText(tag)}` });
  const { receivedAt } = await ended;
  const turnMs = receivedAt - sentAt;
  const { milliseconds: llmMs, calls: llmCalls } = await llm.llmTimeOfTurn(tag);
  return { turnMs, llmMs, llmCalls, overheadMs: turnMs - llmMs };
}

async function measureTurns(socket: SessionSocket, llm: LlmProcess, label: string, count: number): Promise<TurnSample[]> {
  const samples: TurnSample[] = [];
  for (let index = 0; index < count; index++) samples.push(await measureTurn(socket, llm, `${label}-${index}`));
  return samples;
}

function summarize(scenario: string, samples: TurnSample[], budgetMs: number, context: string): ScenarioResult {
  const overhead = median(samples.map((sample) => sample.overheadMs));
  const turns = samples.map((sample) => sample.turnMs);
  const llmMedian = median(samples.map((sample) => sample.llmMs));
  const callCounts = [...new Set(samples.map((sample) => sample.llmCalls))].sort((left, right) => left - right).join(' or ');
  return {
    rows: [
      {
        scenario,
        measured:
          `overhead median ${milliseconds(overhead)} (p95 ${milliseconds(percentile(samples.map((sample) => sample.overheadMs), 0.95))}); ` +
          `turn median ${milliseconds(median(turns))}, p95 ${milliseconds(percentile(turns, 0.95))}; LLM median ${milliseconds(llmMedian)}`,
        target: `overhead median < ${budgetMs} ms`,
        passed: overhead < budgetMs,
      },
    ],
    details: [
      `${scenario}: ${samples.length} measured turns ${context}; turn min ${milliseconds(Math.min(...turns))}, ` +
        `max ${milliseconds(Math.max(...turns))}; LLM time p95 ${milliseconds(percentile(samples.map((sample) => sample.llmMs), 0.95))}; ` +
        `LLM calls per turn: ${callCounts} (the answer, plus planning when the server runs it).`,
    ],
  };
}

/** Scenario 1: 10 fresh sessions × 20 turns, after 10 warm-up turns in another session. */
export async function freshSessionTurns({ server, llm }: BenchContext): Promise<ScenarioResult> {
  await llm.configure(instantReply);
  const sessionCount = 10;
  const turnsPerSession = 20;
  const warmup = await SessionSocket.connect(server, await createSession(server));
  await measureTurns(warmup, llm, 'fresh-warmup', 10);
  await warmup.close();

  const samples: TurnSample[] = [];
  for (let session = 0; session < sessionCount; session++) {
    const socket = await SessionSocket.connect(server, await createSession(server));
    samples.push(...(await measureTurns(socket, llm, `fresh-${session}`, turnsPerSession)));
    await socket.close();
  }
  return summarize(
    '1. Turn overhead, fresh session',
    samples,
    15,
    `(${sessionCount} new sessions × ${turnsPerSession} turns, 10 warm-up turns discarded; 20 instant chunks per reply)`,
  );
}

/** Scenario 2: 100 turns on the seeded 2,000-message session, after 3 warm-up turns on it. */
export async function longSessionTurns({ server, llm }: BenchContext, sessionId: string, seededCharacters: number): Promise<ScenarioResult> {
  await llm.configure(instantReply);
  const warmupTurns = 3;
  const measuredTurns = 100;
  const socket = await SessionSocket.connect(server, sessionId);
  await measureTurns(socket, llm, 'long-warmup', warmupTurns);
  const samples = await measureTurns(socket, llm, 'long', measuredTurns);
  await socket.close();
  return summarize(
    '2. Turn overhead, 2,000-message session',
    samples,
    30,
    `(one session seeded with 2,000 messages, ${seededCharacters.toLocaleString('en-US')} characters, ${warmupTurns} warm-up ` +
      `turns discarded; each turn adds its question and answer, so it ends near ${2_000 + 2 * (warmupTurns + measuredTurns)} messages)`,
  );
}
