// Scenario 5: spawn → first 200 from /health, idle RSS, and RSS once everything has run.
import { sleep } from '../epoch-time.ts';
import type { ReportRow } from '../report.ts';
import { ServerProcess, type ServerOptions } from '../server-process.ts';
import { megabytes, milliseconds } from '../statistics.ts';

const settleMs = 2_000;

export interface MeasuredStart {
  server: ServerProcess;
  rows: ReportRow[];
  details: string[];
}

export async function startAndMeasure(options: ServerOptions): Promise<MeasuredStart> {
  const { server, startMs } = await ServerProcess.start(options);
  await sleep(settleMs);
  const idleKilobytes = await server.residentKilobytes();
  const commandLine = await server.commandLine();
  return {
    server,
    rows: [
      { scenario: '5a. Start: spawn → first 200 from `/health`', measured: milliseconds(startMs, 0), target: '< 1,000 ms', passed: startMs < 1_000 },
      {
        scenario: `5b. Idle RSS (${settleMs / 1000} s after start)`,
        measured: megabytes(idleKilobytes),
        target: '< 100 MB',
        passed: idleKilobytes < 100 * 1024,
      },
    ],
    details: [
      `Start and RSS: /health polled every 10 ms from spawn; RSS is VmRSS of pid ${server.pid} (\`${commandLine}\`), ` +
        `the server's own node process (MB = MiB).`,
    ],
  };
}

export async function finalMemory(server: ServerProcess): Promise<ReportRow> {
  const kilobytes = await server.residentKilobytes();
  return { scenario: '5c. RSS after all scenarios', measured: megabytes(kilobytes), target: 'report only', passed: undefined };
}
