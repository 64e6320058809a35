// Scenario 22: a Telegram round trip through the Bot API stand-in of test/support, which runs in
// this process. A server process of its own (TELEGRAM_BOT_TOKEN, TELEGRAM_ALLOWED_USERS,
// TELEGRAM_API_ROOT pointing at the stand-in) long-polls it; each sample queues a private text
// message and times, with the stand-in's own records, from the held getUpdates being answered with
// it to the answer's sendMessage arriving, minus the scripted LLM's time for the turn.
import path from 'node:path';
import { startTelegramBotApi, type RecordedCall } from '../../test/support/telegram-bot-api.ts';
import { turnTagText } from '../llm-protocol.ts';
import { projectRoot } from '../project-root.ts';
import type { ScenarioResult } from '../report.ts';
import { ServerProcess } from '../server-process.ts';
import { median, milliseconds, percentile } from '../statistics.ts';
import { makeTemporaryDirectory, removeTemporaryDirectory } from '../temporary-directories.ts';
import type { BenchContext } from './bench-context.ts';

const person = 7_500_001;
const warmUp = 5;
const samples = 50;
const budgetMs = 50;

async function until<T>(probe: () => T | undefined | false | Promise<T | undefined | false>, what: string, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
}

export async function telegramRoundTrips(context: BenchContext): Promise<ScenarioResult> {
  const { llm } = context;
  const api = await startTelegramBotApi();
  const directory = await makeTemporaryDirectory('hearth-bench-telegram-');
  let server: ServerProcess | undefined;
  try {
    await llm.configure({ chunkCount: 1, delayMs: 0, stamped: false, chunkCharacters: 40 });
    ({ server } = await ServerProcess.start({
      dataDir: directory,
      databaseFile: path.join(directory, 'hearth.db'),
      llmUrl: llm.url,
      environment: {
        TOOLS_DIR: path.join(directory, 'tools'),
        PROFILES_DIR: path.join(projectRoot, 'profiles'),
        TELEGRAM_BOT_TOKEN: api.token,
        TELEGRAM_ALLOWED_USERS: String(person),
        TELEGRAM_API_ROOT: api.apiRoot,
      },
    }));
    const running = server;
    const get = async (url: string) => (await fetch(running.baseUrl + url, { headers: running.headers })).json() as Promise<any>;
    await until(async () => (await get('/integrations')).integrations.some((status: { name: string; status: string }) => status.name === 'telegram' && status.status === 'connected'), 'telegram connected');
    // The first poll after connecting is held: a message queued now is answered at once.
    await until(() => api.callsOf('getUpdates').some((call) => call.answeredAt === undefined), 'a held getUpdates');

    const hearthMs: number[] = [];
    const wholeMs: number[] = [];
    const llmMs: number[] = [];
    for (let index = 0; index < warmUp + samples; index++) {
      const tag = `telegram-${index}`;
      const sentBefore = api.callsOf('sendMessage').length;
      const queuedAt = Date.now();
      api.sendText(person, `Hello ${turnTagText(tag)}`, { firstName: 'Bench' });
      const delivered = await until(
        () => api.callsOf('getUpdates').find((call: RecordedCall) => call.answeredAt !== undefined && call.answeredAt >= queuedAt && call.errorCode === undefined),
        'the update delivered',
      );
      const out = await until(() => api.callsOf('sendMessage').slice(sentBefore).find((call) => call.body.chat_id === person), 'the answer sent');
      const turn = await llm.llmTimeOfTurn(tag);
      // The turn, its title and its draft settle before the next message, which would find it busy.
      await until(async () => (await get('/sessions')).every((session: { running: boolean }) => !session.running), 'the turn ended');
      await until(() => api.callsOf('getUpdates').some((call) => call.answeredAt === undefined && call.at >= delivered.answeredAt!), 'the next held poll');
      if (index < warmUp) continue;
      wholeMs.push(out.at - delivered.answeredAt!);
      llmMs.push(turn.milliseconds);
      hearthMs.push(out.at - delivered.answeredAt! - turn.milliseconds);
    }
    const hearthMedian = median(hearthMs);
    return {
      rows: [
        {
          scenario: '22. Telegram round trip: update in → first message out, Hearth’s own time',
          measured: `median ${milliseconds(hearthMedian)} (p95 ${milliseconds(percentile(hearthMs, 0.95))}); with the LLM median ${milliseconds(median(wholeMs))}, LLM median ${milliseconds(median(llmMs))}; ${samples} messages`,
          target: `median < ${budgetMs} ms`,
          passed: hearthMedian < budgetMs,
        },
      ],
      details: [
        `22. Telegram round trip: a server process of its own (\`npm start\`'s node command, LOG_LEVEL=silent, the shipped profiles) with TELEGRAM_BOT_TOKEN, TELEGRAM_ALLOWED_USERS and TELEGRAM_API_ROOT pointing at the Bot API stand-in of test/support/telegram-bot-api.ts, which runs in the bench process; the scripted LLM answers each turn with one chunk of 40 characters at once. The real grammY client long-polls the stand-in; each sample queues a private text message while a getUpdates is held, so it is answered with it at once, and is timed from that answer leaving the stand-in (its \`answeredAt\`, Date.now()) to the answer's sendMessage arriving there (its \`at\`), minus the LLM process's own time for the turn's calls (planning, when the profile runs it, and the answer; tagged by the message). Between samples the turn is let end (GET /sessions shows none running) and the next poll be held. ${warmUp} warm-up messages discarded, then ${samples} in one chat session; min ${milliseconds(Math.min(...hearthMs))}, max ${milliseconds(Math.max(...hearthMs))}. It includes grammY parsing the update, finding the chat's session, starting the turn, the request to the LLM and parsing its stream, the answer rendered to Telegram HTML and the sendMessage request. Both ends' timestamps are whole milliseconds.`,
      ],
    };
  } finally {
    await server?.stop();
    await api.close();
    await removeTemporaryDirectory(directory);
  }
}
