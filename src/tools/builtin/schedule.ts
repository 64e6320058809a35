import { Type, type Static } from '@sinclair/typebox';
import type { Clock } from '../../time/clock.ts';
import { describeInstant, withZoneOffset } from '../../time/local-time.ts';
import type { ScheduleFields } from '../../time/schedule-input.ts';
import { nextRuns, type Checked } from '../../time/schedule-times.ts';
import type { Schedule } from '../../store/schedules-repository.ts';
import type { Tool, ToolContext, ToolOutput } from '../tool.ts';
import type { ToolSessions } from '../tool-sessions.ts';
import { toolFailure } from '../../failure.ts';
import { conversationOf, profileRefusal, type PersonReach } from './profile-reach.ts';

/** What the schedule tool needs of the scheduler (the server's Scheduler is one). */
export interface ScheduleBook {
  readonly clock: Clock;
  readonly defaultTimezone: string;
  list(): Schedule[];
  get(id: string): Schedule | undefined;
  /** A schedule of that person: its runs are theirs. */
  create(fields: ScheduleFields, personId: string): Promise<Checked<Schedule>>;
  update(id: string, fields: ScheduleFields): Promise<Checked<Schedule> | { ok: false; message: string }>;
  remove(id: string): Promise<boolean>;
}

const actions = ['create', 'list', 'cancel', 'pause', 'resume'] as const;
type Action = (typeof actions)[number];

const parameters = Type.Object(
  {
    action: Type.Unsafe<Action>({ type: 'string', enum: [...actions] }),
    name: Type.Optional(Type.String()),
    prompt: Type.Optional(Type.String({ description: 'instruction the run follows' })),
    cron: Type.Optional(Type.String()),
    every: Type.Optional(Type.String({ description: 'e.g. 30m, 2h, 1d' })),
    at: Type.Optional(Type.String({ description: 'once, e.g. 2026-11-24 09:00' })),
    timezone: Type.Optional(Type.String()),
    profile: Type.Optional(Type.String()),
    id: Type.Optional(Type.String()),
  },
  { additionalProperties: false },
);

type ScheduleArguments = Static<typeof parameters>;

function timingText(schedule: Schedule): string {
  const { timing, timezone } = schedule;
  if ('cron' in timing) return `cron "${timing.cron}" in ${timezone}`;
  if ('at' in timing) return `once at ${describeInstant(new Date(timing.at), timezone)} (${timing.at})`;
  const minutes = timing.everyMs / 60_000;
  return `every ${minutes % 1440 === 0 ? `${minutes / 1440}d` : minutes % 60 === 0 ? `${minutes / 60}h` : `${minutes}m`}`;
}

function describe(schedule: Schedule, now: Date): string {
  const upcoming = schedule.enabled ? nextRuns(schedule.timing, schedule.timezone, new Date(schedule.createdAt), now, 3) : [];
  const state = schedule.enabled ? '' : ' [paused or done]';
  const next = upcoming.length === 0 ? 'no next run' : `next: ${upcoming.map((instant) => describeInstant(instant, schedule.timezone)).join('; ')}`;
  const last = schedule.lastStatus === null ? '' : `; last run ${schedule.lastStatus}`;
  return `- ${schedule.name} (id ${schedule.id}, profile ${schedule.profileId})${state}: ${timingText(schedule)}; ${next}${last}\n  prompt: ${schedule.prompt}`;
}

export const sharedSessionsKeepNoSchedules =
  "A session shared with the household keeps no schedules: others write in it, so its person's schedules are neither shown, made nor changed here. Ask in a private session.";

/**
 * The agent's own schedules (docs/agent.md, "Schedules, reminders and notifications"): reminders and
 * recurring jobs that run as whole turns. With `profiles` and `person`, a schedule is made only
 * under a profile its person may use.
 */
export function createScheduleTool(deps: {
  sessions: () => ToolSessions | undefined;
  schedules: () => ScheduleBook | undefined;
  profiles?: PersonReach['profiles'];
  person?: PersonReach['person'];
}): Tool<ScheduleArguments> {
  /** The profile a schedule is created for: the session's unless the model names another (which is asked about first). */
  async function targetProfile(args: ScheduleArguments, context: ToolContext): Promise<string | undefined> {
    return args.profile ?? context.sessionProfileId ?? (await deps.sessions()?.find(context.parentSessionId ?? context.sessionId))?.profileId;
  }

  async function create(book: ScheduleBook, args: ScheduleArguments, context: ToolContext, personId: string): Promise<ToolOutput> {
    const timezone = args.timezone ?? book.defaultTimezone;
    const profile = await targetProfile(args, context);
    const refused = profile === undefined || !deps.profiles ? undefined : await profileRefusal({ ...deps, profiles: deps.profiles }, personId, profile);
    if (refused !== undefined) return toolFailure(`Not created: ${refused} Nothing was stored.`);
    const created = await book.create({
      ...(args.name !== undefined && { name: args.name }),
      ...(args.prompt !== undefined && { prompt: args.prompt }),
      ...(args.cron !== undefined && { cron: args.cron }),
      ...(args.every !== undefined && { every: args.every }),
      ...(args.at !== undefined && { at: withZoneOffset(args.at, timezone) }),
      timezone,
      ...(profile !== undefined && { profile_id: profile }),
    }, personId);
    if (!created.ok) return toolFailure(`Not created: ${created.message}. Nothing was stored.`);
    return `Created:\n${describe(created.value, book.clock.now())}`;
  }

  async function change(book: ScheduleBook, action: 'cancel' | 'pause' | 'resume', id: string | undefined, personId: string): Promise<ToolOutput> {
    const found = id === undefined ? undefined : book.get(id);
    // Someone else's schedule answers as a missing one.
    const schedule = found?.personId === personId ? found : undefined;
    if (!schedule) return toolFailure(`${id === undefined ? 'Send id' : `No schedule ${id}`}: use the id from action "list".`);
    if (action === 'cancel') {
      await book.remove(schedule.id);
      return `Cancelled ${schedule.name} (id ${schedule.id}); it will not run again.`;
    }
    const updated = await book.update(schedule.id, { enabled: action === 'resume' });
    if (!updated.ok) return toolFailure(`Not changed: ${updated.message}.`);
    return `${action === 'pause' ? 'Paused' : 'Resumed'}:\n${describe(updated.value, book.clock.now())}`;
  }

  return {
    name: 'schedule',
    description: 'Reminders and recurring jobs: create (cron, every or at), list, cancel, pause, resume.',
    parameters,
    subject(args, context) {
      const target = args.action === 'create' ? (args.profile ?? context?.sessionProfileId) : undefined;
      return [args.action, args.name ?? args.id ?? '', ...(target === undefined ? [] : [`(profile ${target})`])].filter((part) => part !== '').join(' ');
    },
    outflow: (args) => (args.action === 'create' ? { effect: 'a schedule created now' } : undefined),
    // A scheduled run follows its profile's approval rules unattended: only the person may put work under another profile's.
    mustAsk(args, context) {
      if (args.action !== 'create' || args.profile === undefined || args.profile === context?.sessionProfileId) return undefined;
      const current = context?.sessionProfileId === undefined ? '' : ` instead of this conversation's ${context.sessionProfileId}`;
      return `the model asks to create a schedule that runs unattended under the ${args.profile} profile's approval rules${current}`;
    },
    async execute(args, context) {
      const book = deps.schedules();
      if (!book) return toolFailure('Schedules are not available in this server.');
      // Whose conversation this is: the tool creates, lists and changes only their schedules.
      const conversation = await conversationOf(deps, context);
      if (conversation === undefined) return toolFailure('This conversation no longer exists, so it has no schedules.');
      if (conversation.shared) return toolFailure(sharedSessionsKeepNoSchedules);
      const { personId } = conversation;
      const action: Action = args.action;
      switch (action) {
        case 'create':
          return create(book, args, context, personId);
        case 'list': {
          const schedules = book.list().filter((schedule) => schedule.personId === personId);
          if (schedules.length === 0) return 'There are no schedules.';
          const now = book.clock.now();
          return `Schedules (${schedules.length}):\n${schedules.map((schedule) => describe(schedule, now)).join('\n')}`;
        }
        case 'cancel':
        case 'pause':
        case 'resume':
          return change(book, action, args.id, personId);
        default:
          return toolFailure(`Unknown action "${String(action satisfies never)}"; use one of: ${actions.join(', ')}.`);
      }
    },
  };
}
