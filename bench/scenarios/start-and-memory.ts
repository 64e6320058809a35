// Scenario 5: spawn → first 200 from /health, as `npm start`'s node command (5a) and as `npm start`
// itself with a secret in the environment (5a'), each the median of 10 starts on the bench's
// database; idle RSS 2 s after the last start (5b), and RSS once everything has run (5c).
import { randomBytes } from 'node:crypto';
import os from 'node:os';
import { sleep } from '../epoch-time.ts';
import { loadAverage, type ReportRow } from '../report.ts';
import { ServerProcess, type ServerOptions } from '../server-process.ts';
import { median, megabytes } from '../statistics.ts';

const settleMs = 2_000;
const starts = 10;
const startBudgetMs = 500;
const idleBudgetMegabytes = 80;

export interface MeasuredStart {
  server: ServerProcess;
  rows: ReportRow[];
  details: string[];
}

/** Median and spread of start times, with the load the machine was under from first to last. */
function startFigure(times: readonly number[], loadBefore: string): string {
  const spread = `${Math.round(Math.min(...times))}–${Math.round(Math.max(...times))}`;
  return `${Math.round(median(times))} ms median of ${times.length} (${spread}); load ${loadBefore} → ${loadAverage()}, ${os.cpus().length} cores`;
}

/**
 * `npm start` as people type it: npm, the shell it runs the script in, and a server that finds a
 * secret in its environment and so moves it out of its exec environment (src/process-hardening).
 */
async function npmStartTimes(options: ServerOptions): Promise<number[]> {
  const times: number[] = [];
  for (let start = 0; start < starts; start++) {
    const { server, startMs } = await ServerProcess.start({
      ...options,
      launcher: 'npm',
      environment: { ...options.environment, AUTH_TOKEN: randomBytes(24).toString('hex') },
    });
    times.push(startMs);
    await server.stop();
  }
  return times;
}

export async function startAndMeasure(options: ServerOptions): Promise<MeasuredStart> {
  const npmLoad = loadAverage();
  const npmTimes = options.nodeFlags ? [] : await npmStartTimes(options);
  const npmFigure = npmTimes.length > 0 ? startFigure(npmTimes, npmLoad) : '';
  const nodeLoad = loadAverage();
  const nodeTimes: number[] = [];
  let kept: ServerProcess | undefined;
  for (let start = 0; start < starts; start++) {
    const { server, startMs } = await ServerProcess.start(options);
    nodeTimes.push(startMs);
    // The last start is the server every later scenario uses.
    if (start === starts - 1) kept = server;
    else await server.stop();
  }
  const server = kept!;
  const nodeFigure = startFigure(nodeTimes, nodeLoad);
  await sleep(settleMs);
  const idleKilobytes = await server.residentKilobytes();
  const commandLine = await server.commandLine();
  return {
    server,
    rows: [
      {
        scenario: '5a. Start: spawn `node dist/main.js` → first 200 from `/health`',
        measured: nodeFigure,
        target: `median < ${startBudgetMs} ms (idle machine)`,
        passed: median(nodeTimes) < startBudgetMs,
      },
      ...(npmTimes.length > 0
        ? [
            {
              scenario: "5a'. Start: spawn `npm start`, AUTH_TOKEN in its environment → first 200 from `/health`",
              measured: npmFigure,
              target: `median < ${startBudgetMs} ms (idle machine)`,
              passed: median(npmTimes) < startBudgetMs,
            },
          ]
        : []),
      {
        scenario: `5b. Idle RSS (${settleMs / 1000} s after start)`,
        measured: megabytes(idleKilobytes),
        target: `< ${idleBudgetMegabytes} MB`,
        passed: idleKilobytes < idleBudgetMegabytes * 1024,
      },
    ],
    details: [
      `Start and RSS: /health polled every 10 ms from spawn, ${starts} starts each, one after another on the bench's database (the 2,000-message session); ` +
        `5a' first, as \`npm start\` with AUTH_TOKEN set, so that npm, its shell and the server's restart without the secret (src/process-hardening) are all in it; ` +
        `then 5a, whose last server stays for the other scenarios. RSS is VmRSS of pid ${server.pid} (\`${commandLine}\`), ` +
        `the server's own node process (MB = MiB). The load average (1, 5, 15 min) is the machine's before → after each set of starts. ` +
        `The servers and npm get the environment of the terminal the bench was typed in, without the variables the bench's own \`npm run\` added.`,
      ...(process.env.NODE_EXTRA_CA_CERTS
        ? [
            `NODE_EXTRA_CA_CERTS is set in this machine's environment (${process.env.NODE_EXTRA_CA_CERTS}): every node process reads that bundle as it starts, ` +
              `before any of its code runs, and \`npm start\` with a secret runs three (npm, the server, the server started again without the secret).`,
          ]
        : []),
    ],
  };
}

export async function finalMemory(server: ServerProcess): Promise<ReportRow> {
  const kilobytes = await server.residentKilobytes();
  return { scenario: '5c. RSS after all scenarios', measured: megabytes(kilobytes), target: 'report only', passed: undefined };
}
