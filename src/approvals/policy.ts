// The approval rules of a profile (`approvals:` in its front matter) and how a call is
// judged against them. Pure functions: the gate that waits for the person is in agent/.

import { judgeReadOnly, type ReadOnlyVerdict } from './readonly-command.ts';

export type Verdict = 'allow' | 'ask' | 'deny';

export interface ApprovalRule {
  /** As written in the profile, for messages and the audit. */
  text: string;
  tool: string;
  /** Absent for a bare tool name, which matches every call of the tool. */
  pattern?: RegExp;
  /** `terminal(readonly)` / `ssh_exec(readonly)`: matches a command the read-only class accepts (readonly-command.ts). */
  readOnly?: true;
}

export interface ApprovalPolicy {
  default: Verdict;
  deny: ApprovalRule[];
  allow: ApprovalRule[];
  ask: ApprovalRule[];
}

/** A profile without an `approvals` block: every call runs, as before approvals existed. */
export const allowEverything: ApprovalPolicy = { default: 'allow', deny: [], allow: [], ask: [] };

export interface ApprovalCall {
  tool: string;
  subject: string;
  /** The subject is a command line a shell may run (terminal, ssh_exec, code_exec). */
  commandSubject: boolean;
  /** The subject held whitespace or control characters besides its separators (src/approvals/normalise-subject.ts). */
  hiddenCharacters?: boolean;
  /** The tool insists on asking for this call (a user tool wanting permissions). */
  mustAsk?: string | undefined;
  /** The tool says it destroys or overwrites things (an MCP tool's destructiveHint): a default of allow asks instead. */
  destructive?: boolean;
}

export interface Judgement {
  verdict: Verdict;
  /** The rule that decided, or `default`. */
  rule: string;
  reason?: string;
  /** A `readonly` allow rule did not match this call: why its command is not read-only. */
  notReadOnly?: string;
}

const ruleShape = /^([A-Za-z0-9_-]{1,64})(?:\((.*)\))?$/s;

/** Parses `tool` or `tool(glob)`; answers a message for anything else. */
export function parseRule(text: string): ApprovalRule | string {
  const match = ruleShape.exec(text.trim());
  if (!match) return `"${text}" is not a rule: write a tool name, or tool(glob) such as terminal(ls *)`;
  const [, tool, glob] = match as unknown as [string, string, string | undefined];
  if (glob === undefined) return { text, tool };
  if (glob.trim() === '') return `"${text}" has an empty pattern: drop the parentheses to match every call of ${tool}`;
  if (glob.trim() === readOnlyClass) {
    if (!readOnlyTools.has(tool)) return `"${text}": the readonly class is for terminal and ssh_exec, whose subject is a command`;
    return { text, tool, readOnly: true };
  }
  return { text, tool, pattern: globToRegExp(glob) };
}

/**
 * `*` matches any run of characters, except that a `*` followed by a space matches one
 * word: `* systemctl status *` allows "web1 systemctl status nginx" on any host but not
 * "web1 rm -rf /tmp/x systemctl status". A trailing ` *` also matches nothing, so
 * `ls *` covers a bare `ls` (and never `lsblk`).
 */
export function globToRegExp(glob: string): RegExp {
  const normalised = normaliseSpaces(glob);
  let source = '';
  for (let index = 0; index < normalised.length; index++) {
    const character = normalised[index]!;
    if (character !== '*') {
      source += character.replace(/[.+?^${}()|[\]\\]/g, '\\$&');
      continue;
    }
    if (normalised[index + 1] === ' ') source += '\\S*';
    else if (index === normalised.length - 1 && normalised[index - 1] === ' ') source = `${source.slice(0, -1)}(?: [^]*)?`;
    else source += '[^]*';
  }
  return new RegExp(`^${source}$`);
}

/** Characters through which a command line does more than run one command with arguments. */
const shellControl = /[;&|`<>\r\n\0]|\$\(/;

export function hasShellControl(subject: string): boolean {
  return shellControl.test(subject);
}

function normaliseSpaces(text: string): string {
  return text.replace(/[ \t]+/g, ' ').trim();
}

const readOnlyClass = 'readonly';
const readOnlyTools = new Set(['terminal', 'ssh_exec']);

/** The command of a call judged by a `readonly` rule: ssh_exec's subject is `<host> <command>`. */
function commandOf(call: ApprovalCall): string {
  const subject = call.subject.trim();
  return call.tool === 'ssh_exec' ? subject.replace(/^\S+[ \t]*/, '') : subject;
}

/** The read-only verdict of a call, worked out once however many rules ask for it. */
function readOnlyOf(call: ApprovalCall): () => ReadOnlyVerdict {
  let verdict: ReadOnlyVerdict | undefined;
  const hidden: ReadOnlyVerdict = { readOnly: false, reason: 'the command holds whitespace or control characters other than spaces and tabs' };
  return () => (verdict ??= call.hiddenCharacters === true ? hidden : judgeReadOnly(commandOf(call)));
}

function matchesCall(rule: ApprovalRule, call: ApprovalCall, subject: string, readOnly: () => ReadOnlyVerdict): boolean {
  if (rule.tool !== call.tool) return false;
  if (rule.readOnly) return readOnly().readOnly;
  return rule.pattern === undefined || rule.pattern.test(subject);
}

/** The rule text of a call asked about because its tool is destructive and no rule matched. */
export const destructiveDefault = 'default (the tool is marked destructive)';

/** What the person reads about such a call (the approval's `reason`): why it asks, in plain words. */
export const destructiveReason = 'Asked because the tool can destroy or overwrite something, and no rule allows it';

/**
 * Precedence: deny, then allow, then ask, then the default (docs/agent.md, "Approvals"). Under a default
 * of allow a destructive tool's call is asked about; an allow rule naming it still lets it run.
 */
export function judge(policy: ApprovalPolicy, call: ApprovalCall): Judgement {
  const subject = normaliseSpaces(call.subject);
  const readOnly = readOnlyOf(call);
  const matches = (rule: ApprovalRule) => matchesCall(rule, call, subject, readOnly);
  const denied = policy.deny.find(matches);
  if (denied) return { verdict: 'deny', rule: denied.text };
  // A tool's insistence turns allow into ask, never a refusal into a question: under a default of
  // deny, a call no allow or ask rule names stays denied.
  if (call.mustAsk !== undefined) {
    const named = policy.allow.some(matches) || policy.ask.some(matches);
    if (named || policy.default !== 'deny') return { verdict: 'ask', rule: 'tool', reason: call.mustAsk };
    return { verdict: 'deny', rule: 'default' };
  }
  const unsafeForGlobs = call.hiddenCharacters === true || (call.commandSubject && hasShellControl(subject));
  const allowed = policy.allow.find((rule) => matches(rule) && !(rule.pattern && unsafeForGlobs));
  if (allowed) return { verdict: 'allow', rule: allowed.text };
  const unmatchedReadOnly = policy.allow.some((rule) => rule.readOnly && rule.tool === call.tool) ? readOnly() : undefined;
  const why = unmatchedReadOnly && !unmatchedReadOnly.readOnly ? { notReadOnly: unmatchedReadOnly.reason } : {};
  const asked = policy.ask.find(matches);
  if (asked) return { verdict: 'ask', rule: asked.text, ...why };
  if (call.destructive === true && policy.default === 'allow') return { verdict: 'ask', rule: destructiveDefault, ...why };
  return { verdict: policy.default, rule: 'default', ...why };
}

export interface PolicyDefinition {
  default?: Verdict;
  deny?: string[];
  allow?: string[];
  ask?: string[];
}

/** Builds a policy from a profile's `approvals` block; answers the first bad rule's message. */
export function buildPolicy(definition: PolicyDefinition | undefined): ApprovalPolicy | string {
  if (definition === undefined) return allowEverything;
  const lists = { deny: [] as ApprovalRule[], allow: [] as ApprovalRule[], ask: [] as ApprovalRule[] };
  for (const key of ['deny', 'allow', 'ask'] as const) {
    for (const text of definition[key] ?? []) {
      const rule = parseRule(text);
      if (typeof rule === 'string') return `approvals.${key}: ${rule}`;
      lists[key].push(rule);
    }
  }
  return { default: definition.default ?? 'allow', ...lists };
}
