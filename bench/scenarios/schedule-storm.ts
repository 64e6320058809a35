// Scenario 21: 1,000 schedules due at once (issue 24). A server process of its own starts on a
// database whose 1,000 schedules all fell due while it was down, so each runs once at start;
// GET /health is timed back to back from a process of its own (bench/health-prober.ts) until the
// scripted LLM has answered all 1,000
// runs, and the most chat requests the LLM had open at once is counted from its own timings.
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { openDatabase } from '../../src/store/database.ts';
import { insertSchedule } from '../../src/store/schedules-repository.ts';
import { HealthProber } from '../health-prober.ts';
import type { TimingReport } from '../llm-process.ts';
import { projectRoot } from '../project-root.ts';
import type { ScenarioResult } from '../report.ts';
import { ServerProcess } from '../server-process.ts';
import { maximum, median, milliseconds, percentile } from '../statistics.ts';
import { makeTemporaryDirectory, removeTemporaryDirectory } from '../temporary-directories.ts';
import type { BenchContext } from './bench-context.ts';

const scheduleCount = 1_000;
const healthBudgetMs = 50;
/** The defaults of LLM_MAX_CONCURRENT and SCHEDULER_MAX_CONCURRENT, which the server runs with here. */
const llmMaxConcurrent = 2;
const chunkCount = 4;
const chunkDelayMs = 2;
const stormTimeoutMs = 300_000;

/** 1,000 hourly schedules created two hours ago whose next run passed a minute ago. */
async function seedDueSchedules(databaseFile: string): Promise<void> {
  const db = await openDatabase(databaseFile);
  try {
    const now = Date.now();
    for (let index = 0; index < scheduleCount; index++) {
      await insertSchedule(db, {
        id: randomUUID(),
        name: `Storm ${index}`,
        prompt: `Scheduled job ${index}`,
        timing: { everyMs: 3_600_000 },
        timezone: 'UTC',
        profileId: 'secretary',
        enabled: true,
        createdAt: new Date(now - 7_200_000).toISOString(),
        nextRunAt: new Date(now - 60_000).toISOString(),
      });
    }
  } finally {
    await db.destroy();
  }
}

/** The most intervals open at one instant; an interval ending where another begins does not overlap it. */
function mostAtOnce(reports: readonly TimingReport[]): number {
  const edges = reports.flatMap((report) => [
    { at: report.receivedAt, change: 1 },
    { at: report.finishedAt, change: -1 },
  ]);
  edges.sort((first, second) => first.at - second.at || first.change - second.change);
  let open = 0;
  let most = 0;
  for (const edge of edges) {
    open += edge.change;
    most = Math.max(most, open);
  }
  return most;
}

export async function scheduleStorm({ llm }: BenchContext): Promise<ScenarioResult> {
  const directory = await makeTemporaryDirectory('hearth-bench-schedule-storm-');
  const reports: TimingReport[] = [];
  let answered = 0;
  let allAnswered: () => void = () => {};
  const finished = new Promise<void>((resolve) => (allAnswered = resolve));
  const stopListening = llm.onTiming((report) => {
    reports.push(report);
    if (report.answer && ++answered === scheduleCount) allAnswered();
  });
  let server: ServerProcess | undefined;
  const prober = await HealthProber.start();
  try {
    await llm.configure({ chunkCount, delayMs: chunkDelayMs, stamped: false });
    const databaseFile = path.join(directory, 'hearth.db');
    await seedDueSchedules(databaseFile);
    const began = performance.now();
    ({ server } = await ServerProcess.start({
      dataDir: directory,
      databaseFile,
      llmUrl: llm.url,
      environment: { TOOLS_DIR: path.join(directory, 'tools'), PROFILES_DIR: path.join(projectRoot, 'profiles') },
    }));
    const timeout = new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`only ${answered} of ${scheduleCount} runs answered`)), stormTimeoutMs).unref());
    const during = await prober.timesUntil(server, Promise.race([finished, timeout]));
    const stormSeconds = (performance.now() - began) / 1000;
    const succeeded = await waitForStatuses(server, scheduleCount);
    const most = mostAtOnce(reports);
    const healthMax = maximum(during);
    return {
      rows: [
        {
          scenario: `21. \`/health\` while ${scheduleCount.toLocaleString('en')} due schedules run`,
          measured:
            `max ${milliseconds(healthMax)} (median ${milliseconds(median(during), 2)}, p99 ${milliseconds(percentile(during, 0.99))}, ${during.length.toLocaleString('en')} requests); ` +
            `${succeeded.toLocaleString('en')} runs ok in ${stormSeconds.toFixed(1)} s; at most ${most} LLM requests in flight`,
          target: `max < ${healthBudgetMs} ms; ≤ ${llmMaxConcurrent} in flight`,
          passed: healthMax < healthBudgetMs && most <= llmMaxConcurrent && succeeded === scheduleCount,
        },
      ],
      details: [
        `21. Schedule storm: a server process of its own (LLM_MAX_CONCURRENT and SCHEDULER_MAX_CONCURRENT at their default, 2) starts on a database seeded with ${scheduleCount.toLocaleString('en')} hourly ` +
          `schedules whose next run passed a minute before, so each runs once at start; the scripted LLM answers each run with ${chunkCount} chunks ${chunkDelayMs} ms apart. ` +
          'GET /health is timed back to back from a process of its own (bench/health-prober-process.ts) from the first 200 until the LLM has answered every run; "in flight" is the most chat requests the LLM ' +
          'process had open at one instant, from its own arrival and flush times; "runs ok" counts schedules whose last_status is ok once the storm is over.',
      ],
    };
  } finally {
    await prober.close();
    stopListening();
    await server?.stop().catch(() => undefined);
    await removeTemporaryDirectory(directory);
  }
}

/** How many schedules report `ok`, once none is still running or queued (the last answers may still be being stored). */
async function waitForStatuses(server: ServerProcess, count: number): Promise<number> {
  for (;;) {
    const listed = (await (await fetch(`${server.baseUrl}/schedules`, { headers: server.headers })).json()) as { schedules: { last_status: string | null }[] };
    const statuses = listed.schedules.map((schedule) => schedule.last_status);
    if (statuses.length === count && statuses.every((status) => status !== 'running' && status !== 'queued')) return statuses.filter((status) => status === 'ok').length;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
