// Scenario 19: 1,000 schedules in the database. (a) spawn → first 200 from /health with them
// against an empty schedules table, two server processes per round; (b) the scheduler's due check
// (the earliest due of 1,000 schedules, what its one timer is armed for), in this process.
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { Agent } from '../../src/agent/agent.ts';
import { createDependencies } from '../../src/app-dependencies.ts';
import { parseConfig } from '../../src/config.ts';
import { createLogger } from '../../src/logger.ts';
import { systemClock } from '../../src/time/clock.ts';
import { nextRunAfter } from '../../src/time/schedule-times.ts';
import { SessionService } from '../../src/sessions/session-service.ts';
import { Scheduler } from '../../src/scheduler/scheduler.ts';
import { openDatabase } from '../../src/store/database.ts';
import { insertSchedule, type ScheduleTiming } from '../../src/store/schedules-repository.ts';
import { projectRoot } from '../project-root.ts';
import type { ScenarioResult } from '../report.ts';
import { ServerProcess } from '../server-process.ts';
import { median, percentile } from '../statistics.ts';
import { makeTemporaryDirectory, removeTemporaryDirectory } from '../temporary-directories.ts';
import type { BenchContext } from './bench-context.ts';

const scheduleCount = 1_000;
const rounds = 5;
const startBudgetMs = 100;
const checks = 20_000;
const warmUp = 2_000;
const checkBudgetMs = 1;
const zones = ['Europe/Berlin', 'America/New_York', 'Asia/Tokyo', 'UTC'];

/** A database file holding `count` schedules (cron, every and at mixed), none due for a day. */
async function seedSchedules(databaseFile: string, count: number): Promise<void> {
  const db = await openDatabase(databaseFile);
  try {
    const now = new Date();
    const createdAt = new Date(now.getTime() - 60_000);
    const after = new Date(now.getTime() + 86_400_000);
    for (let index = 0; index < count; index++) {
      const timing: ScheduleTiming =
        index % 3 === 0
          ? { cron: `${index % 60} ${index % 24} * * *` }
          : index % 3 === 1
            ? { everyMs: (30 + (index % 90)) * 60_000 }
            : { at: new Date(after.getTime() + index * 60_000).toISOString() };
      const timezone = zones[index % zones.length]!;
      await insertSchedule(db, {
        id: randomUUID(),
        name: `Schedule ${index}`,
        prompt: `Do task ${index}`,
        timing,
        timezone,
        profileId: 'secretary',
        enabled: true,
        createdAt: createdAt.toISOString(),
        nextRunAt: nextRunAfter(timing, timezone, createdAt, after)!.toISOString(),
      });
    }
  } finally {
    await db.destroy();
  }
}

async function startTime(directory: string, llmUrl: string): Promise<number> {
  const { server, startMs } = await ServerProcess.start({
    dataDir: directory,
    databaseFile: path.join(directory, 'hearth.db'),
    llmUrl,
    environment: { TOOLS_DIR: path.join(directory, 'tools'), PROFILES_DIR: path.join(projectRoot, 'profiles') },
  });
  await server.stop();
  return startMs;
}

async function dueCheckTimes(databaseFile: string, directory: string): Promise<number[]> {
  const config = parseConfig({ DATA_DIR: directory, DB_PATH: databaseFile, PROFILES_DIR: path.join(projectRoot, 'profiles'), TOOLS_DIR: path.join(directory, 'tools'), LOG_LEVEL: 'silent' });
  const deps = await createDependencies(config);
  const scheduler = new Scheduler({ db: deps.db, sessions: new SessionService({ runs: new Agent(deps, { events: deps.events, notifications: deps.notifications }), db: deps.db, profiles: deps.profiles, approvals: deps.approvals, household: deps.household, filesDirectory: config.SESSION_FILES_DIR, images: deps.images, events: deps.events }), clock: systemClock, defaultTimezone: () => 'UTC', logger: createLogger('silent'), maxConcurrentRuns: config.SCHEDULER_MAX_CONCURRENT });
  try {
    await scheduler.start();
    if (scheduler.list().length !== scheduleCount) throw new Error(`the scheduler loaded ${scheduler.list().length} schedules, not ${scheduleCount}`);
    const times: number[] = [];
    let earliest: number | undefined;
    for (let index = 0; index < warmUp + checks; index++) {
      const started = performance.now();
      earliest = scheduler.earliestDue();
      const elapsed = performance.now() - started;
      if (index >= warmUp) times.push(elapsed);
    }
    if (earliest === undefined) throw new Error('no schedule is due at all');
    return times;
  } finally {
    scheduler.stop();
    await deps.userTools.close();
    await deps.db.destroy();
  }
}

export async function schedulesAtStart(context: BenchContext): Promise<ScenarioResult> {
  const withSchedules = await makeTemporaryDirectory('hearth-bench-schedules-');
  const without = await makeTemporaryDirectory('hearth-bench-no-schedules-');
  try {
    await seedSchedules(path.join(withSchedules, 'hearth.db'), scheduleCount);
    await seedSchedules(path.join(without, 'hearth.db'), 0);
    const loaded: number[] = [];
    const empty: number[] = [];
    // Alternating, so a machine getting busier or quieter affects both alike.
    for (let round = 0; round < rounds; round++) {
      empty.push(await startTime(without, context.llm.url));
      loaded.push(await startTime(withSchedules, context.llm.url));
    }
    const differenceMs = median(loaded) - median(empty);
    const times = await dueCheckTimes(path.join(withSchedules, 'hearth.db'), withSchedules);
    const checkMedianMs = median(times);
    return {
      rows: [
        {
          scenario: '19a. Start with 1,000 schedules vs none',
          measured: `${differenceMs >= 0 ? "+" : ""}${differenceMs.toFixed(0)} ms (median ${median(loaded).toFixed(0)} ms vs ${median(empty).toFixed(0)} ms, ${rounds} starts each)`,
          target: `< ${startBudgetMs} ms`,
          passed: differenceMs < startBudgetMs,
        },
        {
          scenario: '19b. Due check over 1,000 schedules',
          measured: `median ${checkMedianMs.toFixed(4)} ms (p99 ${percentile(times, 0.99).toFixed(4)} ms); ${checks.toLocaleString('en')} checks`,
          target: `median < ${checkBudgetMs} ms`,
          passed: checkMedianMs < checkBudgetMs,
        },
      ],
      details: [
        `19. Schedules: a database file seeded with ${scheduleCount.toLocaleString('en')} enabled schedules (cron, every and at in turn, four time zones, none due for a day) ` +
          `and one with the schedules table empty; server processes started alternately, ${rounds} of each, spawn → first 200 from /health, the difference of medians reported. ` +
          `The due check is Scheduler.earliestDue() (the earliest next run, which the scheduler's single timer is armed for) on a Scheduler started in the bench process on the same file; ${warmUp.toLocaleString('en')} warm-up checks discarded.`,
      ],
    };
  } finally {
    await removeTemporaryDirectory(withSchedules);
    await removeTemporaryDirectory(without);
  }
}
