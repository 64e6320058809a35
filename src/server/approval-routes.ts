import { Type, type Static } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { ApiError } from '../errors.ts';
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

/** The person's decisions on waiting tool calls, and the audit of every decision (README: Approvals). */
export async function approvalRoutes(app: FastifyInstance, options: { sessions: Sessions; db: Db }) {
  const { sessions, db } = options;

  app.post<{ Params: Static<typeof DecisionParams>; Body: Static<typeof ApprovalBody> }>(
    '/sessions/:id/approvals/:call_id',
    { schema: { params: DecisionParams, body: ApprovalBody } },
    async (request) => {
      const { id, call_id: callId } = request.params;
      if (!(await sessions.find(id))) throw new ApiError('session_not_found', `No session with id ${id}.`);
      const { decision, remember } = request.body;
      if (!sessions.decide(id, callId, { decision, ...(remember && { remember }), via: 'rest' })) {
        throw new ApiError('approval_not_found', `No call ${callId} is waiting for a decision in session ${id}.`);
      }
      return { call_id: callId, decision, by: 'user', remember: decision === 'allow' ? (remember ?? 'once') : 'once' };
    },
  );

  app.get<{ Querystring: Static<typeof ListQuery> }>('/approvals', { schema: { querystring: ListQuery } }, async (request) => {
    const { status = 'all', session_id: sessionId, limit = '100' } = request.query;
    const approvals = await listApprovals(db, { status, limit: Number(limit), ...(sessionId !== undefined && { sessionId }) });
    return { approvals: approvals.map(toJson) };
  });
}

function toJson(record: ApprovalRecord) {
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
    requested_at: record.requestedAt,
    expires_at: record.expiresAt,
    decided_at: record.decidedAt,
  };
}
