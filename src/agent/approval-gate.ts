import { EventEmitter } from 'node:events';
import { normaliseSubject } from '../approvals/normalise-subject.ts';
import { destructiveDefault, destructiveReason, judge, type ApprovalPolicy, type Judgement, type Verdict } from '../approvals/policy.ts';
import type { Household } from '../household/household.ts';
import type { Logger } from '../logger.ts';
import { personName, roles, type Person, type PersonName, type Role } from '../people/person.ts';
import { mayDecide, type ProfileAccess } from '../people/rights.ts';
import type { ProfileRegistry } from '../profiles/profile-registry.ts';
import {
  denyAllPending,
  isRememberedForSession,
  recordApproval,
  settleApproval,
  type ApprovalDecision,
  type DecidedBy,
  type Remember,
} from '../store/approvals-repository.ts';
import type { Db } from '../store/database.ts';
import { findSession } from '../store/sessions-repository.ts';
import type { Tool, ToolContext } from '../tools/tool.ts';
import type { PendingApprovalSummary, PendingApprovalView } from '../events/hearth-events.ts';

export interface AuthorizationRequest {
  callId: string;
  tool: Tool;
  args: Record<string, unknown>;
  /** Every policy that governs the run; the strictest verdict wins. */
  policies: readonly ApprovalPolicy[];
  context: ToolContext;
  /** Why the call must be asked about because the run read outside content (src/approvals/outflow.ts); a deny rule still denies. */
  outsideReason?: string | undefined;
  /** The profile the round follows, when it is not the session's (a sub-agent's): its approvers must allow a decider too. */
  profileId?: string;
}

export type Authorization = { allowed: true } | { allowed: false; message: string };

export interface Decision {
  decision: ApprovalDecision;
  remember?: Remember | undefined;
  /** Who decides; the gate lets them only where `mayDecide` does. */
  decider: Person;
  /** Where they decide: `page` (a session socket), `rest`, or a channel's id (`telegram`). */
  via: string;
}

/** What became of a decision: taken, no such call waiting, or the decider may not decide it (`deciders` may). */
export type DecisionOutcome = { decided: true } | { decided: false; reason: 'not_found' } | { decided: false; reason: 'forbidden'; deciders: PersonName[] };

/** Where the gate learns who asks and who may decide: whose session a call's is, who lives here, what each profile lets decide. */
export interface ApprovalPeople {
  household: Pick<Household, 'person' | 'people'>;
  profiles: Pick<ProfileRegistry, 'get'>;
}

/** What the gate says of a waiting call beyond its summary: why it asks, and whether a sub-agent's call it is. */
export interface ApprovalDetails {
  reason: string;
  not_read_only?: string;
  is_subagent: boolean;
}

/** How a waiting call was settled: by the person (and where), a timeout or a stop. */
export interface ApprovalResolution {
  decision: ApprovalDecision;
  by: Exclude<DecidedBy, 'rule'>;
  remember: Remember;
  via?: string;
  /** Who decided, when `by` is `user`. */
  decider?: PersonName;
}

type Outcome = ApprovalResolution;

interface Waiting {
  summary: PendingApprovalSummary;
  /** The person whose run asks; undefined when the session names nobody who lives here (then the owner alone decides). */
  asker: Person | undefined;
  access: ProfileAccess;
  settle: (decision: ApprovalDecision, by: Outcome['by'], remember: Remember, decider?: Decision) => void;
}

/** What a profile that is gone lets decide: the owner alone. */
const ownerOnly: ProfileAccess = { people: ['owner'], approvers: ['owner'] };

const strictness: Record<Verdict, number> = { allow: 0, ask: 1, deny: 2 };

/**
 * The gate every tool call passes before it runs (docs/agent.md, "Approvals"), outside the model: the
 * profile's rules decide, and an `ask` waits for the person, a timeout or a stop.
 * Emits 'changed' whenever the set of waiting approvals changes, 'required' once a call waits (with
 * why it asks) and 'resolved' once a waiting call is settled.
 */
export class ApprovalGate extends EventEmitter<{ changed: []; required: [PendingApprovalSummary, ApprovalDetails]; resolved: [PendingApprovalSummary, ApprovalResolution] }> {
  private readonly waiting = new Map<string, Waiting>();
  private closed = false;

  constructor(
    private readonly db: Db,
    private readonly timeoutMs: number,
    private readonly logger: Logger,
    private readonly people: ApprovalPeople,
  ) {
    super();
  }

  /** At start, approvals a previous process was waiting for are denied: nobody can answer them now. */
  async denyLeftovers(): Promise<void> {
    const count = await denyAllPending(this.db);
    if (count > 0) this.logger.info({ count }, 'approvals left waiting by the previous run were denied');
  }

  async authorize(request: AuthorizationRequest): Promise<Authorization> {
    const { tool, args, context } = request;
    const sessionId = context.parentSessionId ?? context.sessionId;
    const { subject, hiddenCharacters } = normaliseSubject(subjectOf(tool, args, context), tool.subjectParts ?? [tool.commandSubject ? 'command' : 'text']);
    const judgement = strictest(request.policies, {
      tool: tool.name,
      subject,
      commandSubject: tool.commandSubject === true,
      hiddenCharacters,
      mustAsk: joinReasons(await tool.mustAsk?.(args, context), request.outsideReason),
      destructive: tool.destructive === true,
    });
    const { asker, access } = await this.askerOf(sessionId, [context.sessionProfileId, request.profileId], context.askedBy);
    const record = {
      sessionId,
      callId: request.callId,
      tool: tool.name,
      subject,
      rule: judgement.rule,
      isSubagent: context.isSubagent,
      ...(asker && { askedBy: asker.id }),
      approvers: access.approvers,
    };

    let verdict = judgement.verdict;
    if (verdict === 'ask' && judgement.reason === undefined && (await isRememberedForSession(this.db, sessionId, tool.name, subject, asker?.id))) {
      verdict = 'allow';
      record.rule = 'remembered for this session';
    }
    if (verdict !== 'ask') {
      await recordApproval(this.db, { ...record, decision: { decision: verdict, by: 'rule' } });
      if (verdict === 'allow') return { allowed: true };
      return { allowed: false, message: `Refused by the rule ${judgement.rule}: ${tool.name} may not run "${subject}". Do not retry it; tell the person what you wanted to do.` };
    }

    if (this.closed || context.signal.aborted) {
      await recordApproval(this.db, { ...record, decision: { decision: 'deny', by: 'stop' } });
      return { allowed: false, message: stoppedMessage };
    }
    const expiresAt = new Date(Date.now() + this.timeoutMs).toISOString();
    const id = await recordApproval(this.db, { ...record, expiresAt });
    const reason = judgement.reason ?? (judgement.rule === destructiveDefault ? destructiveReason : `rule ${judgement.rule}`);
    const deciders = (await this.people.household.people()).filter((person) => decides(person, asker, access)).map(personName);
    const summary: PendingApprovalSummary = {
      session_id: sessionId,
      call_id: request.callId,
      tool: tool.name,
      subject,
      reason,
      expires_at: expiresAt,
      asked_by: asker ? personName(asker) : null,
      deciders,
    };
    const decided = this.wait({ summary, asker, access }, context.signal);
    context.emit({
      type: 'approval_required',
      call_id: request.callId,
      tool: tool.name,
      args,
      subject,
      reason,
      ...(judgement.notReadOnly !== undefined && { not_read_only: judgement.notReadOnly }),
      expires_at: expiresAt,
      is_subagent: context.isSubagent,
      asked_by: summary.asked_by,
      deciders,
    });
    // Channels hear of a waiting call from here alone; the run's own event is for the session's watchers (the page).
    this.emit('required', summary, { reason, ...(judgement.notReadOnly !== undefined && { not_read_only: judgement.notReadOnly }), is_subagent: context.isSubagent });
    const outcome = await decided;
    await settleApproval(this.db, id, outcome.decision, outcome.by, outcome.remember, outcome.decider && outcome.via !== undefined ? { personId: outcome.decider.id, via: outcome.via } : undefined);
    context.emit({
      type: 'approval_resolved',
      call_id: request.callId,
      decision: outcome.decision,
      by: outcome.by,
      remember: outcome.remember,
      ...(outcome.decider && { decider: outcome.decider }),
      ...(outcome.via !== undefined && { via: outcome.via }),
    });
    if (outcome.decision === 'allow') return { allowed: true };
    return { allowed: false, message: deniedMessage(outcome.by, tool.name, subject, this.timeoutMs) };
  }

  /**
   * A person's answer, taken only from someone `mayDecide` lets decide it (docs/people.md, *Approvals
   * in a household*), whatever the channel: every decision passes here.
   */
  decide(sessionId: string, callId: string, decision: Decision): DecisionOutcome {
    const waiting = this.waiting.get(keyOf(sessionId, callId));
    if (!waiting) return { decided: false, reason: 'not_found' };
    if (!decides(decision.decider, waiting.asker, waiting.access)) return { decided: false, reason: 'forbidden', deciders: waiting.summary.deciders };
    waiting.settle(decision.decision, 'user', decision.decision === 'allow' ? (decision.remember ?? 'once') : 'once', decision);
    return { decided: true };
  }

  /** Whether the person may decide this waiting call; undefined when none waits under that id. */
  mayDecide(sessionId: string, callId: string, person: Person): boolean | undefined {
    const waiting = this.waiting.get(keyOf(sessionId, callId));
    return waiting && decides(person, waiting.asker, waiting.access);
  }

  /** Every waiting call, whoever asked: for the server's own use, never to be shown as it is. */
  pending(): PendingApprovalSummary[] {
    return [...this.waiting.values()].map((waiting) => waiting.summary);
  }

  /** The waiting calls a person is told of: those they may decide, and their own runs' (which they may not always decide). */
  pendingFor(person: Person): PendingApprovalView[] {
    const views: PendingApprovalView[] = [];
    for (const waiting of this.waiting.values()) {
      const canDecide = decides(person, waiting.asker, waiting.access);
      if (canDecide || waiting.asker?.id === person.id) views.push({ ...waiting.summary, can_decide: canDecide });
    }
    return views;
  }

  /** Shutdown: every waiting call is denied as stopped, and nothing waits from now on. */
  close(): void {
    this.closed = true;
    for (const waiting of this.waiting.values()) waiting.settle('deny', 'stop', 'once');
  }

  /**
   * Who asks — whoever started the run (`askedBy`: in a session shared with them, perhaps not its
   * person), else the person whose session it is — and who may decide under the profiles the call
   * runs under (the session's, and a sub-agent's own): only a role every one of them names, as the
   * strictest rule wins.
   */
  private async askerOf(sessionId: string, profileIds: readonly (string | undefined)[], askedBy?: string): Promise<{ asker: Person | undefined; access: ProfileAccess }> {
    const session = await findSession(this.db, sessionId);
    const askerId = askedBy ?? session?.personId;
    const asker = askerId === undefined ? undefined : await this.people.household.person(askerId);
    const named = profileIds.filter((id) => id !== undefined);
    const governing = new Set(named.length > 0 ? named : [session?.profileId ?? '']);
    const accesses = [...governing].map((id) => this.people.profiles.get(id) ?? ownerOnly);
    const approvers = accesses.reduce<readonly Role[]>((allowed, access) => allowed.filter((role) => access.approvers.includes(role)), roles);
    const people = accesses.reduce<readonly Role[]>((allowed, access) => allowed.filter((role) => access.people.includes(role)), roles);
    return { asker, access: { people, approvers } };
  }

  /** Registers the waiting call at once (a decision may come as soon as it is announced); settles on the first answer. */
  private wait(asked: Omit<Waiting, 'settle'>, signal: AbortSignal): Promise<Outcome> {
    const { summary } = asked;
    const key = keyOf(summary.session_id, summary.call_id);
    return new Promise((resolve) => {
      const timer = setTimeout(() => settle('deny', 'timeout', 'once'), this.timeoutMs);
      const onAbort = () => settle('deny', 'stop', 'once');
      const settle = (decision: ApprovalDecision, by: Outcome['by'], remember: Remember, decided?: Decision) => {
        if (this.waiting.get(key) !== waiting) return;
        this.waiting.delete(key);
        clearTimeout(timer);
        signal.removeEventListener('abort', onAbort);
        const resolution: ApprovalResolution = { decision, by, remember, ...(decided && { via: decided.via, decider: personName(decided.decider) }) };
        resolve(resolution);
        this.emit('changed');
        this.emit('resolved', summary, resolution);
      };
      const waiting: Waiting = { ...asked, settle };
      this.waiting.set(key, waiting);
      signal.addEventListener('abort', onAbort, { once: true });
      this.emit('changed');
    });
  }
}

const stoppedMessage = 'Not run: the run was stopped before the person decided.';

function deniedMessage(by: Outcome['by'], tool: string, subject: string, timeoutMs: number): string {
  switch (by) {
    case 'user':
      return `The person denied this call (${tool}: ${subject}); it did not run. Do not retry it: ask what they would like instead, or go on without it.`;
    case 'timeout':
      return `Nobody decided on this call within ${Math.round(timeoutMs / 1000)} s (${tool}: ${subject}), so it did not run. Go on without it, or ask the person.`;
    case 'stop':
      return stoppedMessage;
  }
}

/** `mayDecide`, and for a call whose asker no longer lives here, the owner alone. */
function decides(decider: Person, asker: Person | undefined, access: ProfileAccess): boolean {
  return asker ? mayDecide(decider, asker, access) : decider.role === 'owner';
}

function joinReasons(...reasons: (string | undefined)[]): string | undefined {
  const given = reasons.filter((reason) => reason !== undefined);
  return given.length === 0 ? undefined : given.join('; ');
}

function keyOf(sessionId: string, callId: string): string {
  return `${sessionId}\u0000${callId}`;
}

/** The subject a rule matches; a tool that cannot derive one is judged by its name. */
function subjectOf(tool: Tool, args: Record<string, unknown>, context: ToolContext): string {
  if (!tool.subject) return tool.name;
  try {
    const subject = tool.subject(args, context);
    return subject.trim() === '' ? tool.name : subject;
  } catch {
    return tool.name;
  }
}

function strictest(policies: readonly ApprovalPolicy[], call: Parameters<typeof judge>[1]): Judgement {
  let chosen: Judgement | undefined;
  for (const policy of policies) {
    const judgement = judge(policy, call);
    if (!chosen || strictness[judgement.verdict] > strictness[chosen.verdict]) chosen = judgement;
  }
  return chosen ?? { verdict: 'allow', rule: 'default' };
}
