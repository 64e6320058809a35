import { Type, type Static } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { ApiError } from '../errors.ts';
import type { Household } from '../household/household.ts';
import type { Person } from '../people/person.ts';
import { mayDecide } from '../people/rights.ts';
import type { Sessions } from '../sessions/sessions.ts';
import type { Db } from '../store/database.ts';
import { listApprovals, type ApprovalRecord } from '../store/approvals-repository.ts';
import { ApprovalBody } from './client-commands.ts';

const DecisionParams = Type.Object({ id: Type.String(), call_id: Type.String() });
const ListQuery = Type.Object(
  {
    status: Type.Optional(Type.Union([Type.Literal('pending'), Type.Literal('all')])),
    session_id: Type.Optional(Type.String({ minLength: 1 })),
    // Query strings are text; the route reads the number itself (bodies are validated without coercion).
    limit: Type.Optional(Type.String({ pattern: '^[1-9][0-9]{0,2}$|^1000$' })),
  },
  { additionalProperties: false },
);

/** How many audit rows are read at a time while looking for those the caller may see. */
const scanBatch = 500;

/**
 * Decisions on waiting tool calls, and the audit of every decision (docs/agent.md, "Approvals"): each
 * person decides only what `mayDecide` lets them, and sees only the calls they asked or may decide
 * (docs/people.md, *Approvals in a household*).
 */
export async function approvalRoutes(app: FastifyInstance, options: { sessions: Sessions; db: Db; household: Pick<Household, 'person' | 'people'> }) {
  const { sessions, db, household } = options;

  app.post<{ Params: Static<typeof DecisionParams>; Body: Static<typeof ApprovalBody> }>(
    '/sessions/:id/approvals/:call_id',
    { schema: { params: DecisionParams, body: ApprovalBody } },
    async (request) => {
      const { id, call_id: callId } = request.params;
      const { decision, remember } = request.body;
      // The page decides calls of other sessions (its "asks for you") over REST and says so; the audit's channel is a label, the decider is proven.
      const via = request.headers['x-hearth-client'] === 'page' ? 'page' : 'rest';
      const decided = await sessions.decide(id, callId, { decision, remember, decider: request.caller.person, via });
      if (!decided.ok) throw new ApiError(decided.code, decided.message);
      return { call_id: callId, decision, by: 'user', remember: decision === 'allow' ? (remember ?? 'once') : 'once' };
    },
  );

  app.get<{ Querystring: Static<typeof ListQuery> }>('/approvals', { schema: { querystring: ListQuery } }, async (request) => {
    const { status = 'all', session_id: sessionId, limit = '100' } = request.query;
    const person = request.caller.person;
    // Waiting calls: those the caller may decide now. The audit: those they asked or may decide (the owner: all).
    const shown =
      status === 'pending'
        ? async (record: ApprovalRecord) => sessions.mayDecide(record.sessionId, record.callId, person) === true
        : (record: ApprovalRecord) => inAuditOf(person, record);
    // The database passes over the rows of people the caller could decide for under no profile; each row is then judged.
    const involving = person.role === 'owner' ? undefined : { askers: await askersFor(person), deciderId: person.id };
    const approvals: ApprovalRecord[] = [];
    let beforeId: number | undefined;
    for (;;) {
      const batch = await listApprovals(db, {
        status,
        limit: scanBatch,
        ...(sessionId !== undefined && { sessionId }),
        ...(beforeId !== undefined && { beforeId }),
        ...(involving && { involving }),
      });
      for (const record of batch) if (approvals.length < Number(limit) && (await shown(record))) approvals.push(record);
      if (batch.length < scanBatch || approvals.length === Number(limit)) break;
      beforeId = batch[batch.length - 1]!.id;
    }
    return { approvals: await Promise.all(approvals.map((record) => toJson(record, household))) };
  });

  /** The caller, and those whose calls they could decide under a profile that names their role an approver. */
  async function askersFor(person: Person): Promise<string[]> {
    const people = await household.people();
    return people.filter((asker) => asker.id === person.id || mayDecide(person, asker, { people: [], approvers: [person.role] })).map((asker) => asker.id);
  }

  async function inAuditOf(person: Person, record: ApprovalRecord): Promise<boolean> {
    if (record.askedBy === person.id || record.deciderId === person.id) return true;
    const asker = record.askedBy === null ? undefined : await household.person(record.askedBy);
    // A row from before people, or whose asker left: the owner's alone.
    if (!asker || record.approvers === null) return person.role === 'owner';
    return mayDecide(person, asker, { people: [], approvers: record.approvers });
  }
}

async function toJson(record: ApprovalRecord, household: Pick<Household, 'person'>) {
  const named = async (id: string | null) => (id === null ? null : { id, name: (await household.person(id))?.name ?? null });
  return {
    id: record.id,
    session_id: record.sessionId,
    call_id: record.callId,
    tool: record.tool,
    subject: record.subject,
    rule: record.rule,
    is_subagent: record.isSubagent,
    status: record.decision === null ? 'pending' : 'decided',
    decision: record.decision,
    by: record.decidedBy,
    remember: record.remember,
    asked_by: await named(record.askedBy),
    decider: await named(record.deciderId),
    via: record.decidedVia,
    requested_at: record.requestedAt,
    expires_at: record.expiresAt,
    decided_at: record.decidedAt,
  };
}
