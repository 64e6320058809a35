// Scenario 25: a model pull's progress from the Ollama stand-in's line to the page. The stand-in
// (test/support/ollama-model-library.ts) runs in this process and writes progress lines at a set
// rate; a server process of its own pulls through it and forwards `model_pull` on /ws/events to a
// real `ws` client here. Each event carries the status and summed `completed` of the last line
// Hearth read, so its lag is its receipt time minus that line's send time: one clock, both stamps
// taken in this process. 25a at 20 lines a second includes the hold of the server's 10-a-second
// limit (the latest line winning); 25b at 8 a second, slower than the limit, is the path alone.
import path from 'node:path';
import WebSocket from 'ws';
import { OllamaModelLibrary } from '../../test/support/ollama-model-library.ts';
import { startScriptedOllama } from '../../test/support/scripted-ollama.ts';
import { epochNow } from '../epoch-time.ts';
import type { ReportRow, ScenarioResult } from '../report.ts';
import { ServerProcess } from '../server-process.ts';
import { maximum, median, milliseconds, percentile } from '../statistics.ts';
import { makeTemporaryDirectory, removeTemporaryDirectory } from '../temporary-directories.ts';

const budgetMs = 100;
const pullSeconds = 10;

interface Arrival {
  state: string;
  status: string;
  completed?: number;
  receivedAt: number;
}

interface PullRun {
  linesPerSecond: number;
  lags: number[];
  lines: number;
  events: number;
  seconds: number;
}

export async function modelPullLag(): Promise<ScenarioResult> {
  const library = new OllamaModelLibrary();
  const standIn = await startScriptedOllama({ library });
  const directory = await makeTemporaryDirectory('hearth-bench-pull-');
  let server: ServerProcess | undefined;
  let socket: WebSocket | undefined;
  try {
    ({ server } = await ServerProcess.start({ dataDir: directory, databaseFile: path.join(directory, 'hearth.db'), llmUrl: standIn.url }));
    const arrivals = new Map<string, Arrival[]>();
    const ends = new Map<string, () => void>();
    socket = new WebSocket(`${server.baseUrl.replace('http', 'ws')}/ws/events`, { headers: server.headers });
    socket.on('message', (data) => {
      const receivedAt = epochNow();
      const event = JSON.parse(data.toString()) as { type: string; name: string } & Omit<Arrival, 'receivedAt'>;
      if (event.type !== 'model_pull') return;
      arrivals.get(event.name)?.push({ state: event.state, status: event.status, ...(event.completed !== undefined && { completed: event.completed }), receivedAt });
      if (event.state !== 'pulling') ends.get(event.name)?.();
    });
    await new Promise<void>((resolve, reject) => {
      socket!.once('open', () => resolve());
      socket!.once('error', reject);
    });
    const pull = async (linesPerSecond: number): Promise<PullRun> => {
      const name = `bench-model:${linesPerSecond}-per-second`;
      // Two layers, the weights and a small one, each in steps that take `pullSeconds` together.
      const steps = Math.round((pullSeconds * linesPerSecond) / 2);
      library.add({ name, capabilities: ['completion', 'tools'], layers: [5_000_000_000, 12_000] });
      library.plan(name, { steps, intervalMs: 1000 / linesPerSecond });
      // The bar a line makes: its layer's bytes added to the others' so far, as the event carries them.
      const layers = new Map<string, number>();
      const sentAt = new Map<string, number>();
      library.on('line', (lineName, line, at) => {
        if (lineName !== name) return;
        if (typeof line['digest'] === 'string' && typeof line['completed'] === 'number') layers.set(line['digest'], line['completed']);
        const completed = layers.size === 0 ? undefined : [...layers.values()].reduce((sum, bytes) => sum + bytes, 0);
        sentAt.set(keyOf({ status: String(line['status']), ...(completed !== undefined && { completed }) }), at);
      });
      const received: Arrival[] = [];
      arrivals.set(name, received);
      const ended = new Promise<void>((resolve) => ends.set(name, resolve));
      const began = epochNow();
      const response = await fetch(`${server!.baseUrl}/models/pull`, {
        method: 'POST',
        headers: { ...server!.headers, 'content-type': 'application/json' },
        body: JSON.stringify({ name }),
      });
      if (response.status !== 202) throw new Error(`POST /models/pull answered ${response.status}: ${await response.text()}`);
      await ended;
      const seconds = (epochNow() - began) / 1000;
      const last = received.at(-1)!;
      if (last.state !== 'done') throw new Error(`the pull ended ${last.state}`);
      const lags = received.map((arrival) => {
        const sent = sentAt.get(keyOf(arrival));
        if (sent === undefined) throw new Error(`an event no line was sent for: ${JSON.stringify(arrival)}`);
        return arrival.receivedAt - sent;
      });
      return { linesPerSecond, lags, lines: sentAt.size, events: received.length, seconds };
    };
    const held = await pull(20);
    const alone = await pull(8);
    return {
      rows: [row('25a. Model pull progress at 20 lines/s: stand-in line → `model_pull` at the client, Hearth’s own lag', held, true), row('25b. Same at 8 lines/s (under the limit: nothing held back)', alone, false)],
      details: [
        `25. Model pull progress: the Ollama stand-in runs in the bench process and streams /api/pull's NDJSON (the manifest line, two layers in steps, the digest, manifest and success lines) over ${pullSeconds} s; a server process of its own pulls through the \`ollama\` client and sends \`model_pull\` on /ws/events to a \`ws\` client in the bench process, at most 10 a second while it pulls (the latest line winning, a held one sent when its 100 ms are up) and the end at once. Lag = receipt time − the send time of the line whose status and summed \`completed\` the event carries, both taken with one clock; at 20 lines/s it includes the wait of a line held back.`,
      ],
    };
  } finally {
    socket?.close();
    await server?.stop();
    await standIn.close();
    await removeTemporaryDirectory(directory);
  }
}

function row(scenario: string, run: PullRun, judged: boolean): ReportRow {
  const p99 = percentile(run.lags, 0.99);
  return {
    scenario,
    measured: `median ${milliseconds(median(run.lags))}, p95 ${milliseconds(percentile(run.lags, 0.95))}, p99 ${milliseconds(p99)}, max ${milliseconds(maximum(run.lags))}; ${run.events} events for ${run.lines} lines (${(run.events / run.seconds).toFixed(1)} events/s)`,
    target: judged ? `p99 < ${budgetMs} ms` : 'report only',
    passed: judged ? p99 < budgetMs : undefined,
  };
}

/** A line by its status and the bar's bytes: unique within a pull (each layer's status names its digest). */
function keyOf(line: { status: string; completed?: number }): string {
  return `${line.status} ${line.completed ?? ''}`;
}
