// The approval gate alone, on an in-memory database: rules decide, an ask waits for the person, a
// timeout or a stop, and every decision lands in the approvals table.
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ApprovalGate, type ApprovalPeople, type AuthorizationRequest, type Decision } from '../../src/agent/approval-gate.ts';
import type { PendingApprovalSummary } from '../../src/events/hearth-events.ts';
import { buildPolicy, destructiveReason, type ApprovalPolicy, type PolicyDefinition } from '../../src/approvals/policy.ts';
import { Household } from '../../src/household/household.ts';
import { packageRoot } from '../../src/package-root.ts';
import type { Person } from '../../src/people/person.ts';
import { ProfileRegistry } from '../../src/profiles/profile-registry.ts';
import type { AgentEvent } from '../../src/protocol/events.ts';
import { listApprovals } from '../../src/store/approvals-repository.ts';
import { openDatabase, type Db } from '../../src/store/database.ts';
import type { Tool, ToolContext } from '../../src/tools/tool.ts';
import { recordingLogger } from '../support/recording-logger.ts';

let db: Db;
let gate: ApprovalGate;
let people: ApprovalPeople;
let owner: Person;
// The shipped profiles: who may decide their asks is part of what they ship.
const shippedProfiles = ProfileRegistry.open(path.join(packageRoot, 'profiles'));
beforeEach(async () => {
  db = await openDatabase(':memory:');
  const household = new Household(db);
  people = { household, profiles: await shippedProfiles };
  owner = await household.firstOwner();
  gate = new ApprovalGate(db, 60_000, recordingLogger().logger, people);
});

/** The owner's decision, made on the page unless said; whether it was taken. */
function decide(sessionId: string, callId: string, decision: Omit<Decision, 'decider' | 'via'> & { via?: string }): boolean {
  return gate.decide(sessionId, callId, { via: 'page', ...decision, decider: owner }).decided;
}
afterEach(async () => {
  gate.close();
  await db.destroy();
});

function policy(definition: PolicyDefinition): ApprovalPolicy {
  const built = buildPolicy(definition);
  if (typeof built === 'string') throw new Error(built);
  return built;
}

const shell: Tool<{ command: string }> = {
  name: 'shell',
  description: 'Runs a command.',
  parameters: { type: 'object', properties: { command: { type: 'string' } }, required: ['command'] },
  subject: (args) => args.command,
  commandSubject: true,
  execute: async () => 'ran',
};

interface Call {
  request: AuthorizationRequest;
  events: AgentEvent[];
  controller: AbortController;
}

let calls = 0;
function call(tool: Tool, args: Record<string, unknown>, policies: ApprovalPolicy[], extra: { outsideReason?: string; context?: Partial<ToolContext> } = {}): Call {
  const events: AgentEvent[] = [];
  const controller = new AbortController();
  const context: ToolContext = { sessionId: 'session-1', signal: controller.signal, emit: (event) => events.push(event), isSubagent: false, ...extra.context };
  return { request: { callId: `call-${++calls}`, tool, args, policies, context, outsideReason: extra.outsideReason }, events, controller };
}

/** Starts an authorization that must wait, and answers once the gate announces it; fails at once if it is decided without asking. */
async function asked(pending: Call): Promise<{ authorization: ReturnType<ApprovalGate['authorize']>; summary: PendingApprovalSummary }> {
  const required = new Promise<PendingApprovalSummary>((resolve) => gate.once('required', resolve));
  const authorization = gate.authorize(pending.request);
  const decidedFirst = authorization.then((result) => Promise.reject(new Error(`decided without asking: ${JSON.stringify(result)}`)));
  return { authorization, summary: await Promise.race([required, decidedFirst]) };
}

/** An authorization that must be decided by a rule or a memory; fails at once if it asks instead. */
function unasked(pending: Call): ReturnType<ApprovalGate['authorize']> {
  const required = new Promise<never>((_resolve, reject) => gate.once('required', (summary) => reject(new Error(`asked about ${summary.subject}`))));
  return Promise.race([gate.authorize(pending.request), required]);
}

async function records() {
  return (await listApprovals(db, { status: 'all', limit: 100 })).reverse();
}

const askAboutShell = policy({ default: 'deny', allow: ['shell(ls *)'], ask: ['shell'], deny: ['shell(rm *)'] });

describe('ApprovalGate on an in-memory database', () => {
  it('lets a call an allow rule matches run, and records the rule', async () => {
    const allowed = call(shell, { command: 'ls -l' }, [askAboutShell]);
    expect(await unasked(allowed)).toEqual({ allowed: true });
    expect(allowed.events).toEqual([]);
    expect(await records()).toMatchObject([
      { sessionId: 'session-1', callId: allowed.request.callId, tool: 'shell', subject: 'ls -l', rule: 'shell(ls *)', decision: 'allow', decidedBy: 'rule', expiresAt: null },
    ]);
  });

  it('refuses a call a deny rule matches, saying which rule', async () => {
    const denied = call(shell, { command: 'rm -rf /' }, [askAboutShell]);
    expect(await gate.authorize(denied.request)).toEqual({
      allowed: false,
      message: 'Refused by the rule shell(rm *): shell may not run "rm -rf /". Do not retry it; tell the person what you wanted to do.',
    });
    expect(await records()).toMatchObject([{ subject: 'rm -rf /', rule: 'shell(rm *)', decision: 'deny', decidedBy: 'rule' }]);
  });

  it('takes the strictest verdict of the policies that govern the run', async () => {
    const lenient = policy({ default: 'allow' });
    const strict = policy({ default: 'deny' });
    expect(await gate.authorize(call(shell, { command: 'uptime' }, [lenient, strict]).request)).toMatchObject({ allowed: false });
    expect(await gate.authorize(call(shell, { command: 'uptime' }, [lenient]).request)).toEqual({ allowed: true });
  });

  it('waits on an ask until the person allows it, announcing it and recording who decided', async () => {
    const waiting = call(shell, { command: 'cat notes.txt' }, [askAboutShell]);
    const { authorization, summary } = await asked(waiting);

    expect(summary).toMatchObject({ session_id: 'session-1', call_id: waiting.request.callId, tool: 'shell', subject: 'cat notes.txt' });
    expect(gate.pending()).toEqual([summary]);
    expect(waiting.events).toEqual([
      {
        type: 'approval_required',
        call_id: waiting.request.callId,
        tool: 'shell',
        args: { command: 'cat notes.txt' },
        subject: 'cat notes.txt',
        reason: 'rule shell',
        expires_at: summary.expires_at,
        is_subagent: false,
        // The call's session names nobody: the owner alone decides it.
        asked_by: null,
        deciders: [{ id: owner.id, name: owner.name }],
      },
    ]);
    expect(await listApprovals(db, { status: 'pending', limit: 10 })).toMatchObject([{ callId: waiting.request.callId, decision: null, expiresAt: summary.expires_at }]);
    expect(decide('session-1', 'call-unknown', { decision: 'allow' })).toBe(false);
    expect(decide('session-2', waiting.request.callId, { decision: 'allow' })).toBe(false);

    const resolved = new Promise((resolve) => gate.once('resolved', (_summary, resolution) => resolve(resolution)));
    expect(decide('session-1', waiting.request.callId, { decision: 'allow', via: 'page' })).toBe(true);

    expect(await authorization).toEqual({ allowed: true });
    const decider = { id: owner.id, name: owner.name };
    expect(await resolved).toEqual({ decision: 'allow', by: 'user', remember: 'once', via: 'page', decider });
    expect(gate.pending()).toEqual([]);
    expect(waiting.events.at(-1)).toEqual({ type: 'approval_resolved', call_id: waiting.request.callId, decision: 'allow', by: 'user', remember: 'once', decider, via: 'page' });
    expect(await records()).toMatchObject([{ decision: 'allow', decidedBy: 'user', remember: 'once', rule: 'shell', deciderId: owner.id, decidedVia: 'page' }]);
    // A second answer finds nothing waiting.
    expect(decide('session-1', waiting.request.callId, { decision: 'deny' })).toBe(false);
  });

  it('tells the model when the person denies an ask', async () => {
    const waiting = call(shell, { command: 'cat secrets' }, [askAboutShell]);
    const { authorization } = await asked(waiting);
    decide('session-1', waiting.request.callId, { decision: 'deny', remember: 'session' });
    expect(await authorization).toEqual({
      allowed: false,
      message: 'The person denied this call (shell: cat secrets); it did not run. Do not retry it: ask what they would like instead, or go on without it.',
    });
    // A denial is never remembered.
    expect(await records()).toMatchObject([{ decision: 'deny', decidedBy: 'user', remember: 'once' }]);
  });

  it('denies an ask nobody answers within the timeout', async () => {
    gate.close();
    gate = new ApprovalGate(db, 30, recordingLogger().logger, people);
    const waiting = call(shell, { command: 'cat notes.txt' }, [askAboutShell]);
    const { authorization } = await asked(waiting);
    expect(await authorization).toEqual({
      allowed: false,
      message: 'Nobody decided on this call within 0 s (shell: cat notes.txt), so it did not run. Go on without it, or ask the person.',
    });
    expect(gate.pending()).toEqual([]);
    expect(await records()).toMatchObject([{ decision: 'deny', decidedBy: 'timeout' }]);
  });

  it('denies a waiting ask when the run stops, and one asked after the stop without waiting', async () => {
    const waiting = call(shell, { command: 'cat notes.txt' }, [askAboutShell]);
    const { authorization } = await asked(waiting);
    waiting.controller.abort();
    const stopped = { allowed: false, message: 'Not run: the run was stopped before the person decided.' };
    expect(await authorization).toEqual(stopped);
    expect(waiting.events.at(-1)).toMatchObject({ type: 'approval_resolved', decision: 'deny', by: 'stop' });

    const late = call(shell, { command: 'cat more.txt' }, [askAboutShell]);
    late.controller.abort();
    expect(await gate.authorize(late.request)).toEqual(stopped);
    expect(late.events).toEqual([]);
    expect(await records()).toMatchObject([
      { subject: 'cat notes.txt', decision: 'deny', decidedBy: 'stop' },
      { subject: 'cat more.txt', decision: 'deny', decidedBy: 'stop', expiresAt: null },
    ]);
  });

  it('denies every waiting ask on close, and asks nobody after it', async () => {
    const waiting = call(shell, { command: 'cat notes.txt' }, [askAboutShell]);
    const { authorization } = await asked(waiting);
    gate.close();
    expect(await authorization).toMatchObject({ allowed: false, message: 'Not run: the run was stopped before the person decided.' });
    expect(await gate.authorize(call(shell, { command: 'cat other' }, [askAboutShell]).request)).toMatchObject({ allowed: false });
    expect((await records()).map((record) => record.decidedBy)).toEqual(['stop', 'stop']);
  });

  it('remembers an allow for the session: the same subject runs without asking, another subject or session still asks', async () => {
    const first = call(shell, { command: 'cat notes.txt' }, [askAboutShell]);
    const { authorization } = await asked(first);
    decide('session-1', first.request.callId, { decision: 'allow', remember: 'session' });
    expect(await authorization).toEqual({ allowed: true });

    const again = call(shell, { command: 'cat notes.txt' }, [askAboutShell]);
    expect(await unasked(again)).toEqual({ allowed: true });
    expect(again.events).toEqual([]);

    const otherSubject = call(shell, { command: 'cat diary.txt' }, [askAboutShell]);
    const otherSession = call(shell, { command: 'cat notes.txt' }, [askAboutShell], { context: { sessionId: 'session-2' } });
    for (const pending of [otherSubject, otherSession]) {
      const { authorization: waiting } = await asked(pending);
      decide(pending.request.context.sessionId, pending.request.callId, { decision: 'deny' });
      expect(await waiting).toMatchObject({ allowed: false });
    }
    expect(await records()).toMatchObject([
      { subject: 'cat notes.txt', decision: 'allow', decidedBy: 'user', remember: 'session' },
      { subject: 'cat notes.txt', decision: 'allow', decidedBy: 'rule', rule: 'remembered for this session' },
      { sessionId: 'session-1', subject: 'cat diary.txt', decision: 'deny' },
      { sessionId: 'session-2', subject: 'cat notes.txt', decision: 'deny' },
    ]);
  });

  it('judges a sub-agent call under its parent session, so the parent decides and its memory applies', async () => {
    const child = call(shell, { command: 'cat notes.txt' }, [askAboutShell], { context: { sessionId: 'sub-1', parentSessionId: 'session-1', isSubagent: true } });
    const { authorization, summary } = await asked(child);
    expect(summary.session_id).toBe('session-1');
    expect(decide('session-1', child.request.callId, { decision: 'allow', remember: 'session' })).toBe(true);
    expect(await authorization).toEqual({ allowed: true });
    expect(await records()).toMatchObject([{ sessionId: 'session-1', isSubagent: true }]);
  });

  it("asks with the tool's mustAsk reason even where a rule allows, and a remembered allow does not skip it", async () => {
    const insistent: Tool = { ...shell, name: 'insistent', subject: () => 'wants the network', mustAsk: async () => 'It asks for network access.' };
    const allowing = policy({ default: 'allow', allow: ['insistent'] });
    for (const remember of ['session', 'session'] as const) {
      const pending = call(insistent, {}, [allowing]);
      const { authorization } = await asked(pending);
      expect(pending.events[0]).toMatchObject({ type: 'approval_required', reason: 'It asks for network access.' });
      decide('session-1', pending.request.callId, { decision: 'allow', remember });
      expect(await authorization).toEqual({ allowed: true });
    }
    // Under a default of deny, with no rule naming it, the insistence cannot turn a refusal into a question.
    expect(await gate.authorize(call(insistent, {}, [policy({ default: 'deny' })]).request)).toMatchObject({ allowed: false, message: expect.stringContaining('Refused by the rule default') });
  });

  it('asks with the outside reason, joined to a mustAsk reason; a deny rule still denies', async () => {
    const outsideReason = 'after reading example.com, this request could carry data out';
    const tainted = call(shell, { command: 'ls -l' }, [askAboutShell], { outsideReason });
    const { authorization } = await asked(tainted);
    expect(tainted.events[0]).toMatchObject({ type: 'approval_required', reason: outsideReason });
    decide('session-1', tainted.request.callId, { decision: 'allow', remember: 'session' });
    expect(await authorization).toEqual({ allowed: true });

    const both = call({ ...shell, mustAsk: () => 'It wants permissions.' }, { command: 'ls -l' }, [askAboutShell], { outsideReason });
    const { authorization: second } = await asked(both);
    expect(both.events[0]).toMatchObject({ reason: `It wants permissions.; ${outsideReason}` });
    decide('session-1', both.request.callId, { decision: 'deny' });
    await second;

    expect(await gate.authorize(call(shell, { command: 'rm -rf /' }, [askAboutShell], { outsideReason }).request)).toMatchObject({ allowed: false, message: expect.stringContaining('shell(rm *)') });
  });

  it('asks about a destructive tool under a default of allow, saying why', async () => {
    const wipe: Tool = { ...shell, name: 'wipe', destructive: true, subject: () => 'the disk' };
    const pending = call(wipe, {}, [policy({ default: 'allow' })]);
    const { authorization } = await asked(pending);
    expect(pending.events[0]).toMatchObject({ reason: destructiveReason, subject: 'the disk' });
    decide('session-1', pending.request.callId, { decision: 'deny' });
    expect(await authorization).toMatchObject({ allowed: false });
  });

  it('denies at start what a previous process left waiting', async () => {
    const { authorization } = await asked(call(shell, { command: 'cat notes.txt' }, [askAboutShell]));
    // A new process on the same database: the old gate's wait is left as it was.
    const { logger, lines } = recordingLogger();
    await new ApprovalGate(db, 60_000, logger, people).denyLeftovers();
    expect(await listApprovals(db, { status: 'pending', limit: 10 })).toEqual([]);
    expect((await records())[0]).toMatchObject({ decision: 'deny', decidedBy: 'stop' });
    expect(lines.join('')).toContain('"count":1');
    gate.close();
    await authorization;
  });
});
