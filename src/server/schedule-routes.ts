import { Type, type Static } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import type { Db } from '../store/database.ts';
import { ApiError } from '../errors.ts';
import type { Scheduler } from '../scheduler/scheduler.ts';
import { isoInZone, nextRuns } from '../time/schedule-times.ts';
import type { Checked } from '../time/schedule-times.ts';
import type { Clock } from '../time/clock.ts';
import { listScheduleRuns, type Schedule, type ScheduleRun } from '../store/schedules-repository.ts';

const ScheduleParams = Type.Object({ id: Type.String() });
type ScheduleParams = Static<typeof ScheduleParams>;
/** When a schedule runs: exactly one of cron, every and at (checked by the scheduler), in its time zone. */
const timingFields = {
  cron: Type.Optional(Type.String({ maxLength: 200 })),
  every: Type.Optional(Type.Union([Type.String({ maxLength: 50 }), Type.Integer()])),
  at: Type.Optional(Type.String({ maxLength: 100 })),
  timezone: Type.Optional(Type.String({ maxLength: 100 })),
};
const PreviewBody = Type.Object(timingFields, { additionalProperties: false });
type PreviewBody = Static<typeof PreviewBody>;
const ScheduleBody = Type.Object(
  {
    name: Type.Optional(Type.String({ maxLength: 200 })),
    prompt: Type.Optional(Type.String({ maxLength: 100_000 })),
    ...timingFields,
    profile_id: Type.Optional(Type.String({ minLength: 1 })),
    session_id: Type.Optional(Type.Union([Type.String({ minLength: 1 }), Type.Null()])),
    enabled: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);
type ScheduleBody = Static<typeof ScheduleBody>;

/** A schedule as the API answers it; times are ISO 8601 with the schedule's own offset. */
function toJson(schedule: Schedule, now: Date) {
  const zoned = (iso: string | null) => (iso === null ? null : isoInZone(new Date(iso), schedule.timezone));
  const { timing } = schedule;
  return {
    id: schedule.id,
    name: schedule.name,
    prompt: schedule.prompt,
    cron: 'cron' in timing ? timing.cron : null,
    every_ms: 'everyMs' in timing ? timing.everyMs : null,
    at: 'at' in timing ? timing.at : null,
    timezone: schedule.timezone,
    profile_id: schedule.profileId,
    session_id: schedule.sessionId,
    enabled: schedule.enabled,
    created_at: schedule.createdAt,
    next_run_at: zoned(schedule.nextRunAt),
    last_run_at: zoned(schedule.lastRunAt),
    last_status: schedule.lastStatus,
    next_runs: schedule.enabled
      ? nextRuns(timing, schedule.timezone, new Date(schedule.createdAt), now, 3).map((instant) => isoInZone(instant, schedule.timezone))
      : [],
  };
}

function runToJson(run: ScheduleRun) {
  return {
    id: run.id,
    started_at: run.startedAt,
    finished_at: run.finishedAt,
    status: run.status,
    session_id: run.sessionId,
    ...(run.error !== null && { error: run.error }),
  };
}

function accepted<T>(result: Checked<T>): T {
  if (!result.ok) throw new ApiError('invalid_request', `Invalid body: ${result.message}.`);
  return result.value;
}

/** Schedules, their runs, and running one now (README: Schedules, reminders and notifications). */
export async function scheduleRoutes(app: FastifyInstance, options: { scheduler: Scheduler; clock: Clock; db: Db }) {
  const { scheduler, clock, db } = options;
  const known = (id: string): Schedule => {
    const schedule = scheduler.get(id);
    if (!schedule) throw new ApiError('schedule_not_found', `No schedule with id ${id}.`);
    return schedule;
  };

  app.get('/schedules', async () => ({ schedules: scheduler.list().map((schedule) => toJson(schedule, clock.now())) }));

  app.post<{ Body: ScheduleBody }>('/schedules', { schema: { body: ScheduleBody } }, async (request, reply) => {
    const schedule = accepted(await scheduler.create(request.body));
    return reply.code(201).send({ schedule: toJson(schedule, clock.now()) });
  });

  // What the create form shows while the person types: the next three runs, nothing stored.
  app.post<{ Body: PreviewBody }>('/schedules/preview', { schema: { body: PreviewBody } }, async (request) => {
    const { timezone, nextRuns: upcoming } = accepted(scheduler.preview(request.body));
    return { next_runs: upcoming.map((instant) => isoInZone(instant, timezone)), timezone };
  });

  app.patch<{ Params: ScheduleParams; Body: ScheduleBody }>('/schedules/:id', { schema: { params: ScheduleParams, body: ScheduleBody } }, async (request) => {
    known(request.params.id);
    const schedule = accepted(await scheduler.update(request.params.id, request.body));
    return { schedule: toJson(schedule, clock.now()) };
  });

  app.delete<{ Params: ScheduleParams }>('/schedules/:id', { schema: { params: ScheduleParams } }, async (request, reply) => {
    known(request.params.id);
    await scheduler.remove(request.params.id);
    return reply.code(204).send();
  });

  app.post<{ Params: ScheduleParams }>('/schedules/:id/run', { schema: { params: ScheduleParams } }, async (request, reply) => {
    known(request.params.id);
    scheduler.runNow(request.params.id);
    return reply.code(202).send({ started: true });
  });

  app.get<{ Params: ScheduleParams }>('/schedules/:id/runs', { schema: { params: ScheduleParams } }, async (request) => {
    known(request.params.id);
    return (await listScheduleRuns(db, request.params.id)).map(runToJson);
  });
}
