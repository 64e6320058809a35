import { randomUUID } from 'node:crypto';
import { EventEmitter, setMaxListeners } from 'node:events';
import type { TurnOutcome } from '../agent/turn.ts';
import { ConcurrencyGate } from '../llm/concurrency-gate.ts';
import type { Logger } from '../logger.ts';
import type { Db } from '../store/database.ts';
import {
  closeUnfinishedScheduleRuns,
  deleteSchedule,
  finishScheduleRun,
  insertSchedule,
  listSchedules,
  recordSkippedRun,
  startScheduleRun,
  updateSchedule,
  type RunStatus,
  type Schedule,
  type ScheduleChanges,
} from '../store/schedules-repository.ts';
import type { Sessions } from '../sessions/sessions.ts';
import type { Clock } from '../time/clock.ts';
import { checkText, checkTimeZone, checkTiming, checkWhen, type ScheduleFields } from '../time/schedule-input.ts';
import { nextRunAfter, nextRuns, type Checked } from '../time/schedule-times.ts';

/** What the scheduler asks of sessions: its schedules' sessions, found by their keys, and one turn in each. */
export type SchedulerSessions = Pick<Sessions, 'defaultProfileId' | 'hasProfile' | 'find' | 'keyedSessions' | 'bindKey' | 'unbindKey' | 'findOrCreate' | 'sendWhenIdle'>;

export interface SchedulerOptions {
  db: Db;
  sessions: SchedulerSessions;
  clock: Clock;
  /** SCHEDULER_TIMEZONE, else the server's zone; asked each time a schedule names none. */
  defaultTimezone: () => string;
  logger: Logger;
  /** SCHEDULER_MAX_CONCURRENT: runs at once; further due runs wait in order, `queued`. */
  maxConcurrentRuns: number;
}

const scheduleKeyPrefix = 'schedule:';

/** The key that leads from a schedule to its session, remembered across restarts. */
export function scheduleSessionKey(scheduleId: string): string {
  return `${scheduleKeyPrefix}${scheduleId}`;
}

/** Due schedules handled per turn of the event loop, so a thousand due at once do not hold it. */
const dueBatch = 50;

export interface RunFinished {
  scheduleId: string;
  /** Whose schedule it is: its notification is theirs. */
  personId: string;
  status: Exclude<RunStatus, 'running'>;
  sessionId: string | null;
  error?: string;
}

export type ScheduleResult = Checked<Schedule> | { ok: false; field: 'id'; message: string; notFound: true };

/**
 * Keeps every schedule in memory with one timer armed for the earliest due one (docs/agent.md, "Schedules, reminders and notifications").
 * Emits `run_finished` (RunFinished) after each run or skip.
 */
export class Scheduler extends EventEmitter<{ run_finished: [RunFinished] }> {
  private readonly schedules = new Map<string, Schedule>();
  private readonly running = new Map<string, Promise<void>>();
  private cancelTimer: (() => void) | undefined;
  private armedFor: number | undefined;
  private ticking: Promise<void> = Promise.resolve();
  private stopped = false;
  private readonly runSlots: ConcurrencyGate;
  /** Aborted on stop: runs still waiting for a slot then never start. */
  private readonly stopping = new AbortController();

  readonly clock: Clock;

  get defaultTimezone(): string {
    return this.options.defaultTimezone();
  }

  constructor(private readonly options: SchedulerOptions) {
    super();
    this.clock = options.clock;
    this.runSlots = new ConcurrencyGate(options.maxConcurrentRuns);
    // Every run waiting for a slot listens for it.
    setMaxListeners(0, this.stopping.signal);
  }

  /** Loads the schedules and runs each one that fell due while the server was down, once. */
  async start(): Promise<void> {
    const { db, clock, sessions } = this.options;
    await closeUnfinishedScheduleRuns(db, clock.now().toISOString());
    const keyed = await sessions.keyedSessions(scheduleKeyPrefix);
    for (const schedule of await listSchedules(db)) this.schedules.set(schedule.id, { ...schedule, sessionId: keyed.get(scheduleSessionKey(schedule.id)) ?? null });
    await this.tick();
  }

  /** Cancels the timer; runs under way are left to the agent's own stop. */
  stop(): void {
    this.stopped = true;
    this.stopping.abort();
    this.cancelTimer?.();
  }

  /** Settles once every run under way has ended. */
  async settled(): Promise<void> {
    await this.ticking;
    await Promise.all(this.running.values());
  }

  list(): Schedule[] {
    return [...this.schedules.values()];
  }

  get(id: string): Schedule | undefined {
    return this.schedules.get(id);
  }

  /** A schedule of `personId` (the first owner's when absent): its runs make and use sessions of theirs. */
  async create(fields: ScheduleFields, personId?: string): Promise<Checked<Schedule>> {
    const now = this.options.clock.now();
    const name = checkText(fields, 'name');
    if (!name.ok) return name;
    const prompt = checkText(fields, 'prompt');
    if (!prompt.ok) return prompt;
    const when = checkWhen(fields, this.defaultTimezone, now);
    if (!when.ok) return when;
    const { timing, timezone } = when.value;
    const profileId = fields.profile_id ?? this.options.sessions.defaultProfileId;
    if (!this.options.sessions.hasProfile(profileId)) return { ok: false, field: 'profile_id', message: `profile_id: no profile ${JSON.stringify(profileId)}` };
    const enabled = fields.enabled ?? true;
    const schedule: Schedule = {
      id: randomUUID(),
      name: name.value,
      prompt: prompt.value,
      timing,
      timezone,
      profileId,
      sessionId: fields.session_id ?? null,
      enabled,
      createdAt: now.toISOString(),
      nextRunAt: enabled ? (nextRunAfter(timing, timezone, now, now)?.toISOString() ?? null) : null,
      lastRunAt: null,
      lastStatus: null,
      ...(personId !== undefined && { personId }),
    };
    schedule.personId = await insertSchedule(this.options.db, schedule);
    if (schedule.sessionId !== null) await this.keepSession(schedule.id, schedule.sessionId);
    this.schedules.set(schedule.id, schedule);
    this.arm();
    return { ok: true, value: schedule };
  }

  /** The next `count` runs a schedule with these timing fields would have if it were created now; nothing is stored. */
  preview(fields: ScheduleFields, count = 3): Checked<{ timezone: string; nextRuns: Date[] }> {
    const now = this.options.clock.now();
    const when = checkWhen(fields, this.defaultTimezone, now);
    if (!when.ok) return when;
    const { timing, timezone } = when.value;
    return { ok: true, value: { timezone, nextRuns: nextRuns(timing, timezone, now, now, count) } };
  }

  /** Changes a schedule; new timing fields replace the old timing whole, and the next run is computed again. */
  async update(id: string, fields: ScheduleFields): Promise<ScheduleResult> {
    const existing = this.schedules.get(id);
    if (!existing) return { ok: false, field: 'id', message: `no schedule ${id}`, notFound: true };
    const now = this.options.clock.now();
    const changes: ScheduleChanges = {};
    for (const field of ['name', 'prompt'] as const) {
      if (fields[field] === undefined) continue;
      const checked = checkText(fields, field);
      if (!checked.ok) return checked;
      changes[field] = checked.value;
    }
    if (fields.timezone !== undefined) {
      const timezone = checkTimeZone(fields.timezone);
      if (!timezone.ok) return timezone;
      changes.timezone = timezone.value;
    }
    const timezone = changes.timezone ?? existing.timezone;
    if (fields.cron !== undefined || fields.every !== undefined || fields.at !== undefined) {
      const timing = checkTiming(fields, timezone, now);
      if (!timing.ok) return timing;
      changes.timing = timing.value;
    } else if (changes.timezone !== undefined && 'cron' in existing.timing) {
      const timing = checkTiming({ cron: existing.timing.cron }, timezone, now);
      if (!timing.ok) return timing;
    }
    if (fields.profile_id !== undefined) {
      if (!this.options.sessions.hasProfile(fields.profile_id)) return { ok: false, field: 'profile_id', message: `profile_id: no profile ${JSON.stringify(fields.profile_id)}` };
      changes.profileId = fields.profile_id;
    }
    if (fields.enabled !== undefined) changes.enabled = fields.enabled;
    const updated: Schedule = { ...existing, ...changes, ...(fields.session_id !== undefined && { sessionId: fields.session_id }) };
    if (changes.timing !== undefined || changes.timezone !== undefined || changes.enabled !== undefined) {
      const anchor = changes.timing !== undefined ? now : new Date(existing.createdAt);
      updated.nextRunAt = updated.enabled ? (nextRunAfter(updated.timing, updated.timezone, anchor, now)?.toISOString() ?? null) : null;
      changes.nextRunAt = updated.nextRunAt;
    }
    await updateSchedule(this.options.db, id, changes);
    if (fields.session_id !== undefined) await this.keepSession(id, fields.session_id);
    this.schedules.set(id, updated);
    this.arm();
    return { ok: true, value: updated };
  }

  async remove(id: string): Promise<boolean> {
    this.schedules.delete(id);
    this.arm();
    await this.options.sessions.unbindKey(scheduleSessionKey(id));
    return deleteSchedule(this.options.db, id);
  }

  /** Starts a run now, whatever the schedule's timing; false for an unknown schedule. */
  runNow(id: string): boolean {
    const schedule = this.schedules.get(id);
    if (!schedule) return false;
    this.fire(schedule);
    return true;
  }

  private tick(): Promise<void> {
    this.ticking = this.ticking.then(() => this.runDue()).catch((error: unknown) => this.options.logger.error({ err: error }, 'schedule check failed'));
    return this.ticking;
  }

  /** Each due schedule runs once, however many of its slots passed; its next run is counted from now. */
  private async runDue(): Promise<void> {
    if (this.stopped) return;
    const now = this.options.clock.now();
    let handled = 0;
    for (const schedule of this.schedules.values()) {
      if (!schedule.enabled || schedule.nextRunAt === null || new Date(schedule.nextRunAt).getTime() > now.getTime()) continue;
      if (++handled % dueBatch === 0) {
        await new Promise((resolve) => setImmediate(resolve));
        if (this.stopped) return;
      }
      const oneOff = 'at' in schedule.timing;
      const changes: ScheduleChanges = {
        nextRunAt: oneOff ? null : (nextRunAfter(schedule.timing, schedule.timezone, new Date(schedule.createdAt), now)?.toISOString() ?? null),
        ...(oneOff && { enabled: false }),
      };
      await updateSchedule(this.options.db, schedule.id, changes);
      const updated = { ...schedule, ...changes };
      this.schedules.set(schedule.id, updated);
      this.fire(updated);
    }
    this.arm();
  }

  /** The instant (ms) the earliest enabled schedule is due, if any: what the one timer is armed for. */
  earliestDue(): number | undefined {
    let earliest: number | undefined;
    for (const schedule of this.schedules.values()) {
      if (!schedule.enabled || schedule.nextRunAt === null) continue;
      const at = new Date(schedule.nextRunAt).getTime();
      if (earliest === undefined || at < earliest) earliest = at;
    }
    return earliest;
  }

  private arm(): void {
    if (this.stopped) return;
    const earliest = this.earliestDue();
    if (earliest === this.armedFor) return;
    this.cancelTimer?.();
    this.cancelTimer = undefined;
    this.armedFor = earliest;
    if (earliest === undefined) return;
    this.cancelTimer = this.options.clock.setTimer(new Date(earliest), () => {
      this.armedFor = undefined;
      this.cancelTimer = undefined;
      void this.tick();
    });
  }

  private fire(schedule: Schedule): void {
    if (this.running.has(schedule.id)) {
      void this.skip(schedule);
      return;
    }
    const run = this.executeInTurn(schedule).finally(() => this.running.delete(schedule.id));
    this.running.set(schedule.id, run);
  }

  /** Waits for one of the run slots (as `queued` while it must), then runs; a run still waiting when the scheduler stops or its schedule is removed never starts. */
  private async executeInTurn(schedule: Schedule): Promise<void> {
    const admission = await this.runSlots.enter({ signal: this.stopping.signal, onWait: () => this.remember(schedule.id, { lastStatus: 'queued' }) });
    if (!admission.admitted) return;
    try {
      if (this.schedules.has(schedule.id)) await this.execute(schedule);
    } finally {
      admission.release();
    }
  }

  private async skip(schedule: Schedule): Promise<void> {
    await recordSkippedRun(this.options.db, schedule.id, this.options.clock.now().toISOString());
    this.remember(schedule.id, { lastStatus: 'skipped' });
    this.emit('run_finished', { scheduleId: schedule.id, personId: personOf(schedule), status: 'skipped', sessionId: null });
  }

  /** One whole turn in the schedule's session; a busy session is waited for. */
  private async execute(schedule: Schedule): Promise<void> {
    const { db, clock, logger } = this.options;
    const startedAt = clock.now().toISOString();
    const runId = await startScheduleRun(db, schedule.id, startedAt, schedule.sessionId);
    this.remember(schedule.id, { lastRunAt: startedAt, lastStatus: 'running' });
    let sessionId: string | null = null;
    let status: RunFinished['status'] = 'error';
    let error: string | undefined;
    try {
      sessionId = await this.sessionFor(schedule);
      // The schedule's person asks its calls, also in a session someone shared with them.
      const outcome = await this.options.sessions.sendWhenIdle(sessionId, { content: schedule.prompt, scheduleId: schedule.id, unattended: true }, personOf(schedule));
      ({ status, error } = runStatus(outcome));
    } catch (failure) {
      logger.error({ err: failure, scheduleId: schedule.id }, 'scheduled run failed');
      error = failure instanceof Error ? failure.message : String(failure);
    }
    if (this.schedules.has(schedule.id)) {
      await finishScheduleRun(db, runId, { finishedAt: clock.now().toISOString(), status, sessionId, ...(error !== undefined && { error }) });
      this.remember(schedule.id, { lastStatus: status });
    }
    this.emit('run_finished', { scheduleId: schedule.id, personId: personOf(schedule), status, sessionId, ...(error !== undefined && { error }) });
  }

  /**
   * The session the person named for the schedule's runs (`session_id`), or none (null): a new one
   * is made on the next run. A session that does not exist is not kept, the next run makes one too.
   */
  private async keepSession(scheduleId: string, sessionId: string | null): Promise<void> {
    const { sessions } = this.options;
    if (sessionId !== null && (await sessions.find(sessionId))) await sessions.bindKey(scheduleSessionKey(scheduleId), sessionId);
    else await sessions.unbindKey(scheduleSessionKey(scheduleId));
  }

  /** The schedule's own session: made on its first run (and again once deleted), titled with its name, reused after. */
  private async sessionFor(schedule: Schedule): Promise<string> {
    const found = await this.options.sessions.findOrCreate(scheduleSessionKey(schedule.id), {
      profileId: schedule.profileId,
      title: schedule.name,
      personId: personOf(schedule),
    });
    if (!found.ok) throw new Error(found.message);
    this.remember(schedule.id, { sessionId: found.session.id });
    return found.session.id;
  }

  private remember(id: string, changes: Partial<Schedule>): void {
    const schedule = this.schedules.get(id);
    if (schedule) this.schedules.set(id, { ...schedule, ...changes });
  }
}

/** Stored schedules always carry their person (listSchedules, create); only a hand-made one lacks it. */
function personOf(schedule: Schedule): string {
  if (schedule.personId === undefined) throw new Error(`Schedule ${schedule.id} has no person.`);
  return schedule.personId;
}

function runStatus(outcome: TurnOutcome): { status: RunFinished['status']; error?: string } {
  switch (outcome.status) {
    case 'completed':
      return { status: 'ok' };
    case 'stopped':
      return { status: 'stopped' };
    case 'failed':
    case 'refused':
      return { status: 'error', error: outcome.error.message };
  }
}
