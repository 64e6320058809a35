// Scenario 15: does a large message or a huge answer hold up other clients? /health is
// timed back to back from a process of its own (bench/health-prober.ts) while one session
// takes a 10 MB image and while another streams an answer of 100 MB (cut at MAX_ANSWER_CHARS).
import { createSession, SessionSocket } from '../hearth-client.ts';
import { HealthProber } from '../health-prober.ts';
import { turnTagText } from '../llm-protocol.ts';
import type { ScenarioResult } from '../report.ts';
import { maximum, median, megabytes, milliseconds, percentile } from '../statistics.ts';
import type { ServerProcess } from '../server-process.ts';
import type { BenchContext } from './bench-context.ts';

const budgetMs = 100;
const imageBytes = 10 * 1024 * 1024;
const imageRuns = 5;

/**
 * The body of a message with a 10 MB image, built before the timing starts (serialising it takes
 * 100 ms or more), so that the timed window is the server taking the message.
 */
function imageMessageBody(tag: string): Uint8Array<ArrayBuffer> {
  const image = Buffer.alloc(imageBytes, 7).toString('base64');
  return new TextEncoder().encode(JSON.stringify({ content: `What is in this picture? ${turnTagText(tag)}`, images: [image] }));
}

async function postImage(server: ServerProcess, sessionId: string, body: Uint8Array<ArrayBuffer>): Promise<void> {
  const response = await fetch(`${server.baseUrl}/sessions/${sessionId}/messages`, {
    method: 'POST',
    headers: { ...server.headers, 'content-type': 'application/json' },
    body,
  });
  if (response.status !== 200) throw new Error(`the 10 MB message answered ${response.status}: ${(await response.text()).slice(0, 200)}`);
}

function describe(times: number[]): string {
  return `max ${milliseconds(maximum(times), 0)} (median ${milliseconds(median(times), 1)}, p99 ${milliseconds(percentile(times, 0.99), 0)}, ${times.length} requests)`;
}

export async function responsiveness({ server, llm }: BenchContext): Promise<ScenarioResult> {
  const prober = await HealthProber.start();
  try {
    return await measure(server, llm, prober);
  } finally {
    await prober.close();
  }
}

async function measure(server: ServerProcess, llm: BenchContext['llm'], prober: HealthProber): Promise<ScenarioResult> {
  await llm.configure({ chunkCount: 20, delayMs: 0, stamped: false });
  await postImage(server, await createSession(server), imageMessageBody('image-warmup'));
  const rss: string[] = [`after the warm-up ${megabytes(await server.residentKilobytes())}`];
  const imageTimes: number[] = [];
  // A fresh session each time: one message with one image, not a conversation that keeps sending earlier ones.
  for (let run = 0; run < imageRuns; run++) {
    const session = await createSession(server);
    const body = imageMessageBody(`image-${run}`);
    imageTimes.push(...(await prober.timesUntil(server, postImage(server, session, body), 3)));
    rss.push(`after image ${run + 1} ${megabytes(await server.residentKilobytes())}`);
  }

  await llm.configure({ chunkCount: 100_000, delayMs: 0, stamped: false, chunkCharacters: 1_000 });
  const answerTimes: number[] = [];
  let answerLength = 0;
  for (let run = 0; run < 2; run++) {
    const socket = await SessionSocket.connect(server, await createSession(server));
    const ended = socket.next('stream_end', 120_000);
    socket.send({ type: 'message', content: `Write a hundred megabytes. ${turnTagText(`huge-${run}`)}` });
    answerTimes.push(...(await prober.timesUntil(server, ended, 3)));
    answerLength = (await ended).event.length;
    await socket.close();
    rss.push(`after answer ${run + 1} ${megabytes(await server.residentKilobytes())}`);
  }
  await llm.configure({ chunkCount: 20, delayMs: 0, stamped: false });
  return {
    rows: [
      {
        scenario: '15a. `/health` while a 10 MB image message is taken',
        measured: describe(imageTimes),
        target: `max < ${budgetMs} ms`,
        passed: maximum(imageTimes) < budgetMs,
      },
      {
        scenario: '15b. `/health` while a 100 MB answer streams',
        measured: `${describe(answerTimes)}; answer cut at ${answerLength.toLocaleString('en')} characters`,
        target: `max < ${budgetMs} ms`,
        passed: maximum(answerTimes) < budgetMs,
      },
      { scenario: '15c. Server RSS through scenario 15', measured: rss.join('; '), target: 'report only', passed: undefined },
    ],
    details: [
      `15. Responsiveness: GET /health timed back to back from a process of its own (bench/health-prober-process.ts) while a fresh session is sent a message with a 10 MB image ` +
        `(POST /sessions/:id/messages, answered in 20 chunks; one warm-up, five measured) and while other sessions stream an answer of ` +
        `100,000 chunks of 1,000 characters as fast as the scripted LLM can send them (two runs; the server cuts it at MAX_ANSWER_CHARS).`,
    ],
  };
}
