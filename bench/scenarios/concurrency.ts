// Scenario 4: 100 sessions streaming at once; lag from the LLM sending a chunk to the client receiving it.
import { epochNow } from '../epoch-time.ts';
import { createSession, SessionSocket } from '../hearth-client.ts';
import { readStamps, turnTagText } from '../llm-protocol.ts';
import type { ScenarioResult } from '../report.ts';
import { maximum, median, milliseconds, percentile } from '../statistics.ts';
import type { BenchContext } from './bench-context.ts';

export const concurrentSessionCount = 100;
const sessionCount = concurrentSessionCount;
const chunkCount = 50;
const chunkDelayMs = 20;

export async function concurrentStreams({ server, llm, clockOffset }: BenchContext): Promise<ScenarioResult> {
  await llm.configure({ chunkCount, delayMs: chunkDelayMs, stamped: true });
  const sockets: SessionSocket[] = [];
  try {
    for (let index = 0; index < sessionCount; index++) {
      sockets.push(await SessionSocket.connect(server, await createSession(server)));
    }
    const lags: number[] = [];
    for (const socket of sockets) {
      socket.listen((event, receivedAt) => {
        if (event.type !== 'stream_delta') return;
        // The stamp is the LLM's clock; bring it to ours before subtracting.
        for (const sentAt of readStamps(event.delta)) lags.push(receivedAt - (sentAt - clockOffset.offsetMs));
      });
    }
    const startedAt = epochNow();
    const endings = sockets.map((socket, index) => {
      const ended = socket.next('stream_end', 60_000);
      socket.send({ type: 'message', content: `Stream slowly. ${turnTagText(`concurrent-${index}`)}` });
      return ended;
    });
    const settled = await Promise.allSettled(endings);
    const finishedAt = epochNow();
    const finished = settled.filter((outcome) => outcome.status === 'fulfilled').length;
    const failures = settled.flatMap((outcome) => (outcome.status === 'rejected' ? [String(outcome.reason)] : []));
    const p99 = percentile(lags, 0.99);
    const expected = sessionCount * chunkCount;
    return {
      rows: [
        {
          scenario: `4. ${sessionCount} concurrent streams`,
          measured:
            `${finished}/${sessionCount} finished; lag p50 ${milliseconds(median(lags))}, p99 ${milliseconds(p99)}, ` +
            `max ${milliseconds(maximum(lags))}; wall ${((finishedAt - startedAt) / 1000).toFixed(2)} s`,
          target: 'all finish; p99 lag < 50 ms',
          passed: finished === sessionCount && p99 < 50,
        },
      ],
      details: [
        `Concurrency: ${sessionCount} sessions × ${chunkCount} chunks ${chunkDelayMs} ms apart, the server run with LLM_MAX_CONCURRENT=${sessionCount} (ideal wall ≈ ` +
          `${((chunkCount * chunkDelayMs) / 1000).toFixed(1)} s); ${lags.length} of ${expected} stamped chunks received; ` +
          `clock offset LLM−client ${clockOffset.offsetMs.toFixed(3)} ms (±${(clockOffset.roundTripMs / 2).toFixed(3)} ms).` +
          (failures.length > 0 ? ` Failures: ${[...new Set(failures)].slice(0, 3).join('; ')}` : ''),
      ],
    };
  } finally {
    await Promise.all(sockets.map((socket) => socket.close()));
  }
}
