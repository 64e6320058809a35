import type { Db } from './database.ts';
import type { Selectable } from 'kysely';
import type { ApprovalsTable } from './schema.ts';
import { isRole, type Role } from '../people/person.ts';

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
  /** The person whose run asked; null only on a row whose session named nobody. */
  askedBy: string | null;
  /** The person who decided, when `decidedBy` is `user`. */
  deciderId: string | null;
  /** Where they decided: `page`, `rest`, or a channel's id (`telegram`). */
  decidedVia: string | null;
  /** The roles the asking profile let decide; null on rows from before people. */
  approvers: Role[] | null;
  requestedAt: string;
  expiresAt: string | null;
  decidedAt: string | null;
}

export interface NewApproval extends Pick<ApprovalRecord, 'sessionId' | 'callId' | 'tool' | 'subject' | 'rule' | 'isSubagent'> {
  askedBy?: string;
  approvers?: readonly Role[];
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
    askedBy: row.asked_by,
    deciderId: row.decider_id,
    decidedVia: row.decided_via,
    approvers: approversOf(row.approvers),
    requestedAt: row.requested_at,
    expiresAt: row.expires_at,
    decidedAt: row.decided_at,
  };
}

function approversOf(stored: string | null): Role[] | null {
  if (stored === null) return null;
  const parsed: unknown = JSON.parse(stored);
  return Array.isArray(parsed) ? parsed.filter(isRole) : null;
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
      asked_by: approval.askedBy ?? null,
      approvers: approval.approvers ? JSON.stringify(approval.approvers) : null,
      requested_at: now,
      expires_at: approval.expiresAt ?? null,
      decided_at: approval.decision ? now : null,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  return row.id;
}

/** Who decided a call the person was asked about, and where (`page`, `rest`, `telegram`). */
export interface Decider {
  personId: string;
  via: string;
}

export async function settleApproval(db: Db, id: number, decision: ApprovalDecision, by: DecidedBy, remember: Remember, decider?: Decider): Promise<void> {
  await db
    .updateTable('approvals')
    .set({ decision, decided_by: by, remember, decided_at: new Date().toISOString(), ...(decider && { decider_id: decider.personId, decided_via: decider.via }) })
    .where('id', '=', id)
    .where('decision', 'is', null)
    .execute();
}

/**
 * Whether this tool and subject were allowed for the rest of the session, on an ask of `askedBy`
 * (their own, or one decided for them): in a session shared with the household, what was allowed
 * for one person's asks is not allowed for another's.
 */
export async function isRememberedForSession(db: Db, sessionId: string, tool: string, subject: string, askedBy: string | undefined): Promise<boolean> {
  const row = await db
    .selectFrom('approvals')
    .select('id')
    .where('session_id', '=', sessionId)
    .where((expression) => (askedBy === undefined ? expression('asked_by', 'is', null) : expression('asked_by', '=', askedBy)))
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
  /** Only rows older than this id: the next page of a scan. */
  beforeId?: number;
  /** Only rows one of these people asked, or this person decided. */
  involving?: { askers: readonly string[]; deciderId: string };
}

/** Newest first. */
export async function listApprovals(db: Db, query: ApprovalQuery): Promise<ApprovalRecord[]> {
  let select = db.selectFrom('approvals').selectAll();
  if (query.status === 'pending') select = select.where('decision', 'is', null);
  if (query.sessionId !== undefined) select = select.where('session_id', '=', query.sessionId);
  if (query.beforeId !== undefined) select = select.where('id', '<', query.beforeId);
  const { involving } = query;
  if (involving) {
    select = select.where((where) =>
      where.or([where('decider_id', '=', involving.deciderId), ...(involving.askers.length > 0 ? [where('asked_by', 'in', involving.askers)] : [])]),
    );
  }
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
