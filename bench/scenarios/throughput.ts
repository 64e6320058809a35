// Scenario 3: how many stream_delta events one client receives per second.
import { createSession, SessionSocket } from '../hearth-client.ts';
import { turnTagText } from '../llm-protocol.ts';
import type { ScenarioResult } from '../report.ts';
import { median, milliseconds, thousands } from '../statistics.ts';
import type { BenchContext } from './bench-context.ts';

const chunkCount = 10_000;
const runs = 3;

interface ThroughputRun {
  deltas: number;
  spanMs: number;
  eventsPerSecond: number;
}

async function streamOnce(socket: SessionSocket, tag: string): Promise<ThroughputRun> {
  let deltas = 0;
  let firstAt = 0;
  let lastAt = 0;
  const stopListening = socket.listen((event, receivedAt) => {
    if (event.type !== 'stream_delta') return;
    if (deltas === 0) firstAt = receivedAt;
    lastAt = receivedAt;
    deltas += 1;
  });
  try {
    const ended = socket.next('stream_end', 120_000);
    socket.send({ type: 'message', content: `Stream as fast as you can. ${turnTagText(tag)}` });
    await ended;
  } finally {
    stopListening();
  }
  const spanMs = lastAt - firstAt;
  return { deltas, spanMs, eventsPerSecond: deltas > 1 ? ((deltas - 1) * 1000) / spanMs : 0 };
}

export async function deltaThroughput({ server, llm }: BenchContext): Promise<ScenarioResult> {
  await llm.configure({ chunkCount, delayMs: 0, stamped: false });
  const results: ThroughputRun[] = [];
  // A fresh session per run, so the growing history does not become the subject.
  for (let run = -1; run < runs; run++) {
    const socket = await SessionSocket.connect(server, await createSession(server));
    const result = await streamOnce(socket, run < 0 ? 'throughput-warmup' : `throughput-${run}`);
    if (run >= 0) results.push(result);
    await socket.close();
  }
  const rate = median(results.map((result) => result.eventsPerSecond));
  const complete = results.every((result) => result.deltas === chunkCount);
  return {
    rows: [
      {
        scenario: '3. `stream_delta` throughput, one client',
        measured:
          `${thousands(rate)} events/s (median of ${runs} runs of ${thousands(chunkCount)} chunks: ` +
          `${results.map((result) => thousands(result.eventsPerSecond)).join(' / ')})` +
          (complete ? '' : `; deltas received ${results.map((result) => result.deltas).join(' / ')}`),
        target: '≥ 20,000 events/s',
        passed: rate >= 20_000,
      },
    ],
    details: [
      `Throughput: each run streams ${thousands(chunkCount)} chunks with no delay from a fresh session (one ` +
        `1-run warm-up first); events counted from the first to the last stream_delta received: ` +
        results.map((result) => `${thousands(result.deltas)} in ${milliseconds(result.spanMs, 0)}`).join(', ') +
        '.',
    ],
  };
}
