// Scenario 26: a turn through the OpenAI-compatible front door beside a WebSocket turn, measured
// the same way: at the client, from sending the message to the run's end arriving (`stream_end`
// on the socket; `data: [DONE]` of the SSE stream; the whole `chat.completion` read), minus the
// LLM's own time in the turn. Each of the three keeps one session (the /v1 ones by their `user`
// field) and they take turns, round by round, so the machine's load falls on all alike. Beside the
// wall time, which a loaded machine stretches, each turn's CPU time in the server process (all its
// threads, from /proc/<pid>/task/*/schedstat, in nanoseconds) is summed up.
import { readdir, readFile } from 'node:fs/promises';
import { epochNow } from '../epoch-time.ts';
import { createSession, SessionSocket, type Endpoint } from '../hearth-client.ts';
import { turnTagText } from '../llm-protocol.ts';
import type { ReportRow, ScenarioResult } from '../report.ts';
import { median, milliseconds, percentile } from '../statistics.ts';
import type { BenchContext } from './bench-context.ts';

const instantReply = { chunkCount: 20, delayMs: 0, stamped: false };
const warmUpRounds = 5;
const measuredRounds = 20;
/** What the front door may add to a WebSocket turn's overhead: its JSON body, its own route and SSE framing. */
const extraBudgetMs = 5;
const question = 'Please give me a short status update.';

type Way = 'websocket' | 'streamed' | 'whole';

/** `message` sent → `stream_end` received. */
async function webSocketTurn(socket: SessionSocket, tag: string): Promise<number> {
  const ended = socket.next('stream_end', 30_000);
  const sentAt = epochNow();
  socket.send({ type: 'message', content: `${question} ${turnTagText(tag)}` });
  const { receivedAt } = await ended;
  return receivedAt - sentAt;
}

/** POST /v1/chat/completions sent → `data: [DONE]` (streamed) or the whole body (not) received. */
async function chatCompletionTurn(server: Endpoint, tag: string, stream: boolean): Promise<number> {
  const sentAt = epochNow();
  const response = await fetch(`${server.baseUrl}/v1/chat/completions`, {
    method: 'POST',
    headers: { ...server.headers, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'hearth/secretary', stream, user: `bench-${stream ? 'streamed' : 'whole'}`, messages: [{ role: 'user', content: `${question} ${turnTagText(tag)}` }] }),
  });
  if (response.status !== 200 || !response.body) throw new Error(`POST /v1/chat/completions answered ${response.status}: ${await response.text()}`);
  if (!stream) {
    await response.json();
    return epochNow() - sentAt;
  }
  const decoder = new TextDecoder();
  const reader = response.body.getReader();
  let text = '';
  for (let read = await reader.read(); !read.done; read = await reader.read()) {
    text += decoder.decode(read.value, { stream: true });
    if (text.endsWith('data: [DONE]\n\n')) return epochNow() - sentAt;
  }
  throw new Error(`the stream ended without [DONE]: ${text.slice(-300)}`);
}

/** The CPU time the process's threads have run, in milliseconds. */
async function cpuMilliseconds(pid: number): Promise<number> {
  let nanoseconds = 0;
  for (const task of await readdir(`/proc/${pid}/task`)) {
    const schedstat = await readFile(`/proc/${pid}/task/${task}/schedstat`, 'utf8').catch(() => '0');
    nanoseconds += Number(schedstat.split(' ')[0]);
  }
  return nanoseconds / 1e6;
}

export async function openAiTurnOverhead({ server, llm }: BenchContext): Promise<ScenarioResult> {
  await llm.configure(instantReply);
  const socket = await SessionSocket.connect(server, await createSession(server));
  const overheads: Record<Way, number[]> = { websocket: [], streamed: [], whole: [] };
  const turns: Record<Way, number[]> = { websocket: [], streamed: [], whole: [] };
  const cpu: Record<Way, number[]> = { websocket: [], streamed: [], whole: [] };
  const measure = async (way: Way, round: number, turn: (tag: string) => Promise<number>) => {
    const tag = `openai-${way}-${round}`;
    const cpuBefore = await cpuMilliseconds(server.pid);
    const turnMs = await turn(tag);
    const cpuMs = (await cpuMilliseconds(server.pid)) - cpuBefore;
    const { milliseconds: llmMs } = await llm.llmTimeOfTurn(tag);
    if (round < warmUpRounds) return;
    turns[way].push(turnMs);
    overheads[way].push(turnMs - llmMs);
    cpu[way].push(cpuMs);
  };
  try {
    for (let round = 0; round < warmUpRounds + measuredRounds; round++) {
      await measure('websocket', round, (tag) => webSocketTurn(socket, tag));
      await measure('streamed', round, (tag) => chatCompletionTurn(server, tag, true));
      await measure('whole', round, (tag) => chatCompletionTurn(server, tag, false));
    }
  } finally {
    await socket.close();
  }
  const webSocketOverhead = median(overheads.websocket);
  const row = (scenario: string, way: Way, target: boolean): ReportRow => {
    const overhead = median(overheads[way]);
    return {
      scenario,
      measured:
        `overhead median ${milliseconds(overhead)} (p95 ${milliseconds(percentile(overheads[way], 0.95))}); turn median ${milliseconds(median(turns[way]))}; ` +
        `server CPU a turn median ${milliseconds(median(cpu[way]))}`,
      target: target ? `overhead median < 26a's + ${extraBudgetMs} ms` : '',
      passed: target ? overhead < webSocketOverhead + extraBudgetMs : undefined,
    };
  };
  const difference = median(overheads.streamed) - webSocketOverhead;
  return {
    rows: [
      row('26a. Turn overhead over the session WebSocket (beside 26b, c)', 'websocket', false),
      row('26b. Turn overhead through `POST /v1/chat/completions`, streamed', 'streamed', true),
      row('26c. Turn overhead through `POST /v1/chat/completions`, whole', 'whole', true),
    ],
    details: [
      `26. ${measuredRounds} rounds after ${warmUpRounds} discarded, each a turn over the session WebSocket, one streamed through ` +
        '/v1/chat/completions and one whole (`stream: false`), each way in a session of its own that grows by a turn a round; ' +
        `20 instant chunks per reply. The streamed front door's median overhead is ${milliseconds(difference)} ${difference >= 0 ? 'above' : 'below'} the WebSocket's; ` +
        "server CPU is the server process's threads' run time over the turn (/proc/<pid>/task/*/schedstat).",
    ],
  };
}
