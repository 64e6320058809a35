import type { Notifications } from '../events/notifications.ts';
import type { Logger } from '../logger.ts';
import type { Sessions } from '../sessions/sessions.ts';
import type { RunFinished, Scheduler } from './scheduler.ts';

const bodyLimit = 500;

/**
 * Raises a notification for every finished scheduled run (docs/agent.md, "Schedules, reminders and notifications"): "Reminder: <name>"
 * (a one-off schedule) or "<name> finished" with the run's answer, or "<name> failed" with why. A skipped run ran nothing and raises nothing.
 * Returns what settles once the notifications raised so far are stored.
 */
export function notifyFinishedRuns(options: { scheduler: Scheduler; notifications: Notifications; sessions: Pick<Sessions, 'messages'>; logger: Logger }): () => Promise<void> {
  const { scheduler, notifications, sessions, logger } = options;
  const pending = new Set<Promise<void>>();
  const raise = async (finished: RunFinished) => {
    const schedule = scheduler.get(finished.scheduleId);
    const name = schedule?.name ?? 'A schedule';
    const succeeded = finished.status === 'ok';
    const body = succeeded ? await lastAnswer(sessions, finished.sessionId) : (finished.error ?? (finished.status === 'stopped' ? 'The run was stopped.' : 'The run failed.'));
    // A one-off schedule is a reminder (the schedule tool's "remind me at …"): its name says what it is about.
    const reminder = schedule !== undefined && 'at' in schedule.timing;
    await notifications.raise({
      title: !succeeded ? `${name} failed` : reminder ? `Reminder: ${name}` : `${name} finished`,
      body,
      ...(finished.sessionId !== null && { sessionId: finished.sessionId }),
      personId: finished.personId,
    });
  };
  scheduler.on('run_finished', (finished) => {
    if (finished.status === 'skipped') return;
    const raised = raise(finished)
      .catch((error: unknown) => logger.error({ err: error, scheduleId: finished.scheduleId }, 'notifying a finished scheduled run failed'))
      .finally(() => pending.delete(raised));
    pending.add(raised);
  });
  return async () => {
    await Promise.all(pending);
  };
}

async function lastAnswer(sessions: Pick<Sessions, 'messages'>, sessionId: string | null): Promise<string> {
  if (sessionId === null) return '';
  const messages = await sessions.messages(sessionId, 'display');
  const answer = messages.findLast((message) => message.role === 'assistant')?.content ?? '';
  return answer.length > bodyLimit ? `${answer.slice(0, bodyLimit - 1)}…` : answer;
}
