import type { Logger } from '../logger.ts';
import type { Db } from '../store/database.ts';
import { findSession } from '../store/sessions-repository.ts';
import type { ApprovalGate } from './approval-gate.ts';
import type { PendingApprovalSummary } from '../events/hearth-events.ts';
import type { Notifications } from '../events/notifications.ts';

/** How long a session's last socket may be gone (a reload) before its waiting approvals are notified. */
const reopenGraceMs = 2_000;

export interface UnwatchedApprovalsOptions {
  db: Db;
  approvals: ApprovalGate;
  notifications: Notifications;
  /** Whether a session socket is open on the session now. */
  isWatched: (sessionId: string) => boolean;
  logger: Logger;
}

/**
 * A call that waits in a run nobody watches (a schedule, a heartbeat, a closed page) raises a
 * notification for its asker, so they decide: when it starts waiting with no socket open, or when the
 * last socket of its session closes while it waits (and no socket opens again shortly). A call its
 * asker may not decide (a child's) raises one at once for each person who may, watched or not.
 * Each waiting call is notified at most once. Returns what to call when a session's last socket closed.
 */
/** Whether the person whose run asks may decide it themselves. */
function decidesOwn(waiting: PendingApprovalSummary): boolean {
  return waiting.asked_by !== null && waiting.deciders.some((decider) => decider.id === waiting.asked_by?.id);
}

export function notifyUnwatchedApprovals(options: UnwatchedApprovalsOptions): (sessionId: string) => void {
  const { db, approvals, notifications, isWatched, logger } = options;
  const notified = new Set<string>();
  const keyOf = (waiting: PendingApprovalSummary) => `${waiting.session_id}\u0000${waiting.call_id}`;
  const once = (waiting: PendingApprovalSummary, raise: () => Promise<unknown>) => {
    if (notified.has(keyOf(waiting))) return;
    notified.add(keyOf(waiting));
    raise().catch((error: unknown) => logger.error({ err: error, sessionId: waiting.session_id }, 'notifying a waiting approval failed'));
  };
  const notifyAsker = (waiting: PendingApprovalSummary) =>
    once(waiting, async () => {
      const session = await findSession(db, waiting.session_id);
      await notifications.raise({
        title: `${waiting.tool} waits for your decision in ${session?.title || 'a session'}`,
        body: waiting.subject,
        ...(session && { sessionId: session.id }),
        ...(waiting.asked_by && { personId: waiting.asked_by.id }),
      });
    });
  // The session is the asker's: the deciders' notifications lead to the approval, not into it.
  const notifyDeciders = (waiting: PendingApprovalSummary) =>
    once(waiting, async () => {
      for (const decider of waiting.deciders) {
        await notifications.raise({ title: `${waiting.asked_by?.name ?? 'Someone'} asks to run ${waiting.tool}: it waits for your decision`, body: waiting.subject, personId: decider.id });
      }
    });
  approvals.on('required', (waiting: PendingApprovalSummary) => {
    if (!decidesOwn(waiting)) notifyDeciders(waiting);
    else if (!isWatched(waiting.session_id)) notifyAsker(waiting);
  });
  approvals.on('resolved', (waiting: PendingApprovalSummary) => notified.delete(keyOf(waiting)));
  return (sessionId) => {
    // A reload closes the page's socket for a moment: only a session still unwatched a little later is told about.
    setTimeout(() => {
      if (isWatched(sessionId)) return;
      for (const waiting of approvals.pending()) if (waiting.session_id === sessionId && decidesOwn(waiting)) notifyAsker(waiting);
    }, reopenGraceMs).unref();
  };
}
