import { Type, type Static } from '@sinclair/typebox';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Household } from '../household/household.ts';
import type { Person } from '../people/person.ts';
import { managesHousehold } from '../people/rights.ts';
import type { Sessions } from '../sessions/sessions.ts';
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

export interface ScheduleRouteOptions {
  scheduler: Scheduler;
  clock: Clock;
  db: Db;
  /** Whether a schedule's person may use its profile, and see the session named for its runs. */
  sessions: Pick<Sessions, 'findFor' | 'mayUseProfile' | 'defaultProfileFor'>;
  household: Pick<Household, 'person'>;
}

/**
 * Schedules, their runs, and running one now (docs/agent.md, "Schedules, reminders and notifications").
 * Each is its person's; the owner sees and manages everyone's; anyone else's answers as a missing one.
 */
export async function scheduleRoutes(app: FastifyInstance, options: ScheduleRouteOptions) {
  const { scheduler, clock, db, sessions, household } = options;
  const mayManage = (person: Person, schedule: Schedule) => schedule.personId === person.id || managesHousehold(person);
  const known = (request: FastifyRequest, id: string): Schedule => {
    const schedule = scheduler.get(id);
    if (!schedule || !mayManage(request.caller.person, schedule)) throw new ApiError('schedule_not_found', `No schedule with id ${id}.`);
    return schedule;
  };
  /** The body as the schedule's person may have it: a profile their role may use, a session they and the caller can see (another is dropped as a missing one is). */
  const checked = async (request: FastifyRequest, body: ScheduleBody, person: Person | undefined): Promise<ScheduleBody> => {
    const profileId = body.profile_id;
    if (person && profileId !== undefined && !sessions.mayUseProfile(person, profileId)) {
      throw new ApiError('forbidden', `${person.name} (${person.role}) may not use the profile "${profileId}", so no schedule of theirs may run under it.`);
    }
    // Its runs write in that session: the schedule's person must be able to use it, and the caller to see it.
    const sessionId = body.session_id;
    if (typeof sessionId !== 'string') return body;
    const usable = (await sessions.findFor(request.caller.person, sessionId)) && (!person || (await sessions.findFor(person, sessionId)));
    return usable ? body : { ...body, session_id: null };
  };

  app.get('/schedules', async (request) => ({
    schedules: scheduler
      .list()
      .filter((schedule) => mayManage(request.caller.person, schedule))
      .map((schedule) => toJson(schedule, clock.now())),
  }));

  app.post<{ Body: ScheduleBody }>('/schedules', { schema: { body: ScheduleBody } }, async (request, reply) => {
    const { person } = request.caller;
    const body = await checked(request, { ...request.body, profile_id: request.body.profile_id ?? sessions.defaultProfileFor(person) }, person);
    const schedule = accepted(await scheduler.create(body, person.id));
    return reply.code(201).send({ schedule: toJson(schedule, clock.now()) });
  });

  // What the create form shows while the person types: the next three runs, nothing stored.
  app.post<{ Body: PreviewBody }>('/schedules/preview', { schema: { body: PreviewBody } }, async (request) => {
    const { timezone, nextRuns: upcoming } = accepted(scheduler.preview(request.body));
    return { next_runs: upcoming.map((instant) => isoInZone(instant, timezone)), timezone };
  });

  app.patch<{ Params: ScheduleParams; Body: ScheduleBody }>('/schedules/:id', { schema: { params: ScheduleParams, body: ScheduleBody } }, async (request) => {
    const existing = known(request, request.params.id);
    // A run acts as the schedule's person, with their memory and in their sessions: what it does is theirs to say.
    const changesWhatItDoes = Object.keys(request.body).some((field) => field !== 'enabled');
    if (existing.personId !== request.caller.person.id && changesWhatItDoes) {
      const person = existing.personId === undefined ? undefined : await household.person(existing.personId);
      throw new ApiError('forbidden', `Only ${person?.name ?? 'its person'} changes what this schedule does; you may pause or resume it (enabled), run it now or delete it.`);
    }
    const body = await checked(request, request.body, existing.personId === undefined ? undefined : await household.person(existing.personId));
    const schedule = accepted(await scheduler.update(request.params.id, body));
    return { schedule: toJson(schedule, clock.now()) };
  });

  app.delete<{ Params: ScheduleParams }>('/schedules/:id', { schema: { params: ScheduleParams } }, async (request, reply) => {
    known(request, request.params.id);
    await scheduler.remove(request.params.id);
    return reply.code(204).send();
  });

  app.post<{ Params: ScheduleParams }>('/schedules/:id/run', { schema: { params: ScheduleParams } }, async (request, reply) => {
    known(request, request.params.id);
    scheduler.runNow(request.params.id);
    return reply.code(202).send({ started: true });
  });

  app.get<{ Params: ScheduleParams }>('/schedules/:id/runs', { schema: { params: ScheduleParams } }, async (request) => {
    known(request, request.params.id);
    return (await listScheduleRuns(db, request.params.id)).map(runToJson);
  });
}
