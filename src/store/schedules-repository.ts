import type { Selectable } from 'kysely';
import type { Db } from './database.ts';
import { firstOwnerId } from './first-owner.ts';
import type { ScheduleRunsTable, SchedulesTable } from './schema.ts';

/** When a schedule fires: exactly one of a cron pattern, a fixed interval, or a single instant. */
export type ScheduleTiming = { cron: string } | { everyMs: number } | { at: string };

/** `ok | error | skipped` (docs/protocol.md), plus `running` while a run goes and `stopped` for one cut off. */
export type RunStatus = 'running' | 'ok' | 'error' | 'skipped' | 'stopped';

/** A schedule's last status: a run's, or `queued` while its due run waits for a free place (SCHEDULER_MAX_CONCURRENT; never stored). */
export type ScheduleStatus = RunStatus | 'queued';

/** A schedule as stored; its session is found by its key (the scheduler's), not kept here. */
export interface StoredSchedule {
  id: string;
  name: string;
  prompt: string;
  timing: ScheduleTiming;
  timezone: string;
  profileId: string;
  enabled: boolean;
  createdAt: string;
  nextRunAt: string | null;
  lastRunAt: string | null;
  lastStatus: ScheduleStatus | null;
  /** Who made it; its runs are theirs. Read back always; the first owner's when its writer named nobody. */
  personId?: string;
}

export interface Schedule extends StoredSchedule {
  /** The session its runs go to (the one its key `schedule:<id>` leads to); null before its first run. */
  sessionId: string | null;
}

export interface ScheduleRun {
  id: number;
  scheduleId: string;
  startedAt: string;
  finishedAt: string | null;
  status: RunStatus;
  sessionId: string | null;
  error: string | null;
}

export type ScheduleChanges = Partial<Pick<StoredSchedule, 'name' | 'prompt' | 'timing' | 'timezone' | 'profileId' | 'enabled' | 'nextRunAt'>>;

function timingFromRow(row: Selectable<SchedulesTable>): ScheduleTiming {
  if (row.cron !== null) return { cron: row.cron };
  if (row.every_ms !== null) return { everyMs: row.every_ms };
  return { at: row.at ?? '' };
}

function timingColumns(timing: ScheduleTiming): Pick<SchedulesTable, 'cron' | 'every_ms' | 'at'> {
  return {
    cron: 'cron' in timing ? timing.cron : null,
    every_ms: 'everyMs' in timing ? timing.everyMs : null,
    at: 'at' in timing ? timing.at : null,
  };
}

function fromRow(row: Selectable<SchedulesTable>): StoredSchedule {
  return {
    id: row.id,
    name: row.name,
    prompt: row.prompt,
    timing: timingFromRow(row),
    timezone: row.timezone,
    profileId: row.profile_id,
    enabled: row.enabled === 1,
    createdAt: row.created_at,
    nextRunAt: row.next_run_at,
    lastRunAt: row.last_run_at,
    lastStatus: row.last_status as RunStatus | null,
    personId: row.person_id,
  };
}

function runFromRow(row: Selectable<ScheduleRunsTable>): ScheduleRun {
  return {
    id: row.id,
    scheduleId: row.schedule_id,
    startedAt: row.started_at,
    finishedAt: row.finished_at,
    status: row.status as RunStatus,
    sessionId: row.session_id,
    error: row.error,
  };
}

/** Answers whose the schedule is (the first owner's when it names nobody). */
export async function insertSchedule(db: Db, schedule: Omit<StoredSchedule, 'lastRunAt' | 'lastStatus'>): Promise<string> {
  const { person_id } = await db
    .insertInto('schedules')
    .values({
      id: schedule.id,
      name: schedule.name,
      prompt: schedule.prompt,
      ...timingColumns(schedule.timing),
      timezone: schedule.timezone,
      profile_id: schedule.profileId,
      person_id: schedule.personId ?? firstOwnerId(),
      enabled: schedule.enabled ? 1 : 0,
      created_at: schedule.createdAt,
      next_run_at: schedule.nextRunAt,
      last_run_at: null,
      last_status: null,
    })
    .returning('person_id')
    .executeTakeFirstOrThrow();
  return person_id;
}

export async function listSchedules(db: Db): Promise<StoredSchedule[]> {
  const rows = await db.selectFrom('schedules').selectAll().orderBy('created_at').orderBy('id').execute();
  return rows.map(fromRow);
}

export async function updateSchedule(db: Db, id: string, changes: ScheduleChanges): Promise<void> {
  const values: Partial<SchedulesTable> = {
    ...(changes.name !== undefined && { name: changes.name }),
    ...(changes.prompt !== undefined && { prompt: changes.prompt }),
    ...(changes.timing !== undefined && timingColumns(changes.timing)),
    ...(changes.timezone !== undefined && { timezone: changes.timezone }),
    ...(changes.profileId !== undefined && { profile_id: changes.profileId }),
    ...(changes.enabled !== undefined && { enabled: changes.enabled ? 1 : 0 }),
    ...(changes.nextRunAt !== undefined && { next_run_at: changes.nextRunAt }),
  };
  if (Object.keys(values).length === 0) return;
  await db.updateTable('schedules').set(values).where('id', '=', id).execute();
}

export async function deleteSchedule(db: Db, id: string): Promise<boolean> {
  const result = await db.deleteFrom('schedules').where('id', '=', id).executeTakeFirst();
  return result.numDeletedRows > 0n;
}

export async function startScheduleRun(db: Db, scheduleId: string, startedAt: string, sessionId: string | null): Promise<number> {
  const row = await db
    .insertInto('schedule_runs')
    .values({ schedule_id: scheduleId, started_at: startedAt, finished_at: null, status: 'running', session_id: sessionId, error: null })
    .returning('id')
    .executeTakeFirstOrThrow();
  await db.updateTable('schedules').set({ last_run_at: startedAt, last_status: 'running' }).where('id', '=', scheduleId).execute();
  return row.id;
}

export async function finishScheduleRun(
  db: Db,
  runId: number,
  finish: { finishedAt: string; status: Exclude<RunStatus, 'running'>; sessionId: string | null; error?: string },
): Promise<void> {
  await db.transaction().execute(async (transaction) => {
    const run = await transaction
      .updateTable('schedule_runs')
      .set({ finished_at: finish.finishedAt, status: finish.status, session_id: finish.sessionId, error: finish.error ?? null })
      .where('id', '=', runId)
      .returning('schedule_id')
      .executeTakeFirstOrThrow();
    await transaction.updateTable('schedules').set({ last_status: finish.status }).where('id', '=', run.schedule_id).execute();
  });
}

/** A run that was never started because the previous one was still going. */
export async function recordSkippedRun(db: Db, scheduleId: string, at: string): Promise<void> {
  await db
    .insertInto('schedule_runs')
    .values({ schedule_id: scheduleId, started_at: at, finished_at: at, status: 'skipped', session_id: null, error: 'the previous run was still going' })
    .execute();
  await db.updateTable('schedules').set({ last_status: 'skipped' }).where('id', '=', scheduleId).execute();
}

export async function listScheduleRuns(db: Db, scheduleId: string, limit = 100): Promise<ScheduleRun[]> {
  const rows = await db.selectFrom('schedule_runs').selectAll().where('schedule_id', '=', scheduleId).orderBy('id', 'desc').limit(limit).execute();
  return rows.map(runFromRow);
}

/** Runs a crash or restart cut off are closed as `stopped`, so none stays `running` for ever. */
export async function closeUnfinishedScheduleRuns(db: Db, at: string): Promise<void> {
  await db.updateTable('schedule_runs').set({ status: 'stopped', finished_at: at, error: 'the server stopped during the run' }).where('status', '=', 'running').execute();
  await db.updateTable('schedules').set({ last_status: 'stopped' }).where('last_status', '=', 'running').execute();
}
