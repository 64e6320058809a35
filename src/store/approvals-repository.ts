import type { Db } from './database.ts';
import type { Selectable } from 'kysely';
import type { ApprovalsTable } from './schema.ts';

export type ApprovalDecision = 'allow' | 'deny';
export type DecidedBy = 'user' | 'rule' | 'timeout' | 'stop';
export type Remember = 'once' | 'session';

/** One decision about one tool call, or a call still waiting for one. */
export interface ApprovalRecord {
  id: number;
  sessionId: string;
  callId: string;
  tool: string;
  subject: string;
  rule: string;
  isSubagent: boolean;
  decision: ApprovalDecision | null;
  decidedBy: DecidedBy | null;
  remember: Remember;
  requestedAt: string;
  expiresAt: string | null;
  decidedAt: string | null;
}

export interface NewApproval extends Pick<ApprovalRecord, 'sessionId' | 'callId' | 'tool' | 'subject' | 'rule' | 'isSubagent'> {
  /** Absent for a call that waits for the person. */
  decision?: { decision: ApprovalDecision; by: DecidedBy };
  expiresAt?: string;
}

function fromRow(row: Selectable<ApprovalsTable>): ApprovalRecord {
  return {
    id: row.id,
    sessionId: row.session_id,
    callId: row.call_id,
    tool: row.tool,
    subject: row.subject,
    rule: row.rule,
    isSubagent: row.is_subagent === 1,
    decision: row.decision as ApprovalDecision | null,
    decidedBy: row.decided_by as DecidedBy | null,
    remember: row.remember as Remember,
    requestedAt: row.requested_at,
    expiresAt: row.expires_at,
    decidedAt: row.decided_at,
  };
}

export async function recordApproval(db: Db, approval: NewApproval): Promise<number> {
  const now = new Date().toISOString();
  const row = await db
    .insertInto('approvals')
    .values({
      session_id: approval.sessionId,
      call_id: approval.callId,
      tool: approval.tool,
      subject: approval.subject,
      rule: approval.rule,
      is_subagent: approval.isSubagent ? 1 : 0,
      decision: approval.decision?.decision ?? null,
      decided_by: approval.decision?.by ?? null,
      remember: 'once',
      requested_at: now,
      expires_at: approval.expiresAt ?? null,
      decided_at: approval.decision ? now : null,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  return row.id;
}

export async function settleApproval(db: Db, id: number, decision: ApprovalDecision, by: DecidedBy, remember: Remember): Promise<void> {
  await db
    .updateTable('approvals')
    .set({ decision, decided_by: by, remember, decided_at: new Date().toISOString() })
    .where('id', '=', id)
    .where('decision', 'is', null)
    .execute();
}

/** Whether the person allowed this tool and subject for the rest of the session. */
export async function isRememberedForSession(db: Db, sessionId: string, tool: string, subject: string): Promise<boolean> {
  const row = await db
    .selectFrom('approvals')
    .select('id')
    .where('session_id', '=', sessionId)
    .where('remember', '=', 'session')
    .where('tool', '=', tool)
    .where('subject', '=', subject)
    .where('decision', '=', 'allow')
    .limit(1)
    .executeTakeFirst();
  return row !== undefined;
}

export interface ApprovalQuery {
  status: 'pending' | 'all';
  sessionId?: string;
  limit: number;
}

/** Newest first. */
export async function listApprovals(db: Db, query: ApprovalQuery): Promise<ApprovalRecord[]> {
  let select = db.selectFrom('approvals').selectAll();
  if (query.status === 'pending') select = select.where('decision', 'is', null);
  if (query.sessionId !== undefined) select = select.where('session_id', '=', query.sessionId);
  const rows = await select.orderBy('id', 'desc').limit(query.limit).execute();
  return rows.map(fromRow);
}

/** At start: nobody can answer an approval a previous process was waiting for. */
export async function denyAllPending(db: Db): Promise<number> {
  const result = await db
    .updateTable('approvals')
    .set({ decision: 'deny', decided_by: 'stop', decided_at: new Date().toISOString() })
    .where('decision', 'is', null)
    .executeTakeFirst();
  return Number(result.numUpdatedRows);
}
