import type { Logger } from '../logger.ts';
import type { Db } from '../store/database.ts';
import { findSession } from '../store/sessions-repository.ts';
import type { ApprovalGate } from './approval-gate.ts';
import type { PendingApprovalSummary } from './hearth-events.ts';
import type { Notifications } from './notifications.ts';

export interface UnwatchedApprovalsOptions {
  db: Db;
  approvals: ApprovalGate;
  notifications: Notifications;
  /** Whether a session socket is open on the session now. */
  isWatched: (sessionId: string) => boolean;
  logger: Logger;
}

/** A call that waits in a run nobody watches (a schedule, a heartbeat, a closed page) raises a notification, so someone decides. */
export function notifyUnwatchedApprovals(options: UnwatchedApprovalsOptions): void {
  const { db, approvals, notifications, isWatched, logger } = options;
  approvals.on('required', (waiting: PendingApprovalSummary) => {
    if (isWatched(waiting.session_id)) return;
    void (async () => {
      const session = await findSession(db, waiting.session_id);
      await notifications.raise({
        title: `${waiting.tool} waits for your decision in ${session?.title || 'a session'}`,
        body: waiting.subject,
        ...(session && { sessionId: session.id }),
      });
    })().catch((error: unknown) => logger.error({ err: error, sessionId: waiting.session_id }, 'notifying a waiting approval failed'));
  });
}
