import { createHash } from 'node:crypto';
import type { InlineKeyboardMarkup } from 'grammy/types';
import type { PersonName } from '../../people/person.ts';
import { escapeHtml, renderTelegramHtml } from './render-html.ts';

/** What the approval message shows: the call the gate says waits, and why it asks. */
export interface ApprovalView {
  call_id: string;
  tool: string;
  subject: string;
  reason: string;
  not_read_only?: string;
  is_subagent?: boolean;
  /** Who may decide it, as the gate said when it asked. */
  deciders?: PersonName[];
}

export type ApprovalChoice = 'once' | 'chat' | 'deny';

/** Who or what settled an approval, for the line the message is edited to. */
export type ApprovalDecider =
  | { kind: 'person'; name: string }
  | { kind: 'page' }
  | { kind: 'timeout' }
  | { kind: 'stop' }
  | { kind: 'rule' };

export interface ApprovalOutcome {
  decision: 'allow' | 'deny';
  /** `session`: allowed for the rest of this chat's session. */
  remember: 'once' | 'session';
  decider: ApprovalDecider;
}

const callbackPrefix = 'ap';
const choiceCodes: Record<ApprovalChoice, string> = { once: 'o', chat: 'c', deny: 'd' };
const choicesByCode = new Map(Object.entries(choiceCodes).map(([choice, code]) => [code, choice as ApprovalChoice]));
// Telegram allows 64 bytes of callback data; `ap:o:` takes 5.
const longestPlainKey = 59;
const subjectRoom = 3_000;

/**
 * The call id as callback data carries it: the id itself when it fits, else `#` and 22
 * characters of its SHA-256, which the channel matches against the approvals it presented.
 */
export function approvalCallbackKey(callId: string): string {
  if (Buffer.byteLength(callId, 'utf8') <= longestPlainKey && !callId.startsWith('#')) return callId;
  return `#${createHash('sha256').update(callId).digest('base64url').slice(0, 22)}`;
}

export function approvalCallbackData(callId: string, choice: ApprovalChoice): string {
  return `${callbackPrefix}:${choiceCodes[choice]}:${approvalCallbackKey(callId)}`;
}

/** Reads a button press's callback data; `undefined` when it is not an approval button. */
export function parseApprovalCallback(data: string): { choice: ApprovalChoice; key: string } | undefined {
  const match = /^ap:([ocd]):(.+)$/s.exec(data);
  if (!match) return undefined;
  return { choice: choicesByCode.get(match[1]!)!, key: match[2]! };
}

/** What a choice asks of the approval gate. */
export function decisionOf(choice: ApprovalChoice): { decision: 'allow' | 'deny'; remember: 'once' | 'session' } {
  if (choice === 'deny') return { decision: 'deny', remember: 'once' };
  return { decision: 'allow', remember: choice === 'chat' ? 'session' : 'once' };
}

/**
 * The message asking for a decision, in Telegram HTML: the tool, the subject in a code block, why it
 * asks; `askedBy` names whose run asks, when the card goes to someone else's chat.
 */
export function approvalHtml(approval: ApprovalView, askedBy?: string): string {
  const subject = approval.subject.length > subjectRoom ? `${approval.subject.slice(0, subjectRoom)}…` : approval.subject;
  const lines = [
    `🔐 <b>Approval needed</b>: <code>${escapeHtml(approval.tool)}</code>${approval.is_subagent ? ' (from a sub-agent)' : ''}`,
    ...(askedBy !== undefined ? [`Asked by <b>${escapeHtml(askedBy)}</b>`] : []),
    `<pre>${escapeHtml(subject)}</pre>`,
  ];
  lines.push(...whyLines(approval));
  return lines.join('\n');
}

/**
 * Why the call asks, in words: the gate's `rule <rule>` becomes what the profile asks before, a
 * missed `readonly` rule says what makes the command not read-only, and any other reason (a
 * destructive tool, outside content, the tool's own) is shown as written; code is shown as code.
 */
function whyLines(approval: ApprovalView): string[] {
  const reason = approval.reason.trim();
  const rule = /^rule (.+)$/s.exec(reason)?.[1];
  const notReadOnly = approval.not_read_only ? inlineHtml(approval.not_read_only) : undefined;
  if (rule !== undefined && notReadOnly !== undefined) return [`Why: not read-only: ${notReadOnly}`];
  const lines = [];
  if (rule !== undefined) lines.push(`Why: ${ruleInWords(rule, approval.tool)}`);
  else if (reason !== '') lines.push(`Why: ${inlineHtml(reason)}`);
  if (notReadOnly !== undefined) lines.push(`Not read-only: ${notReadOnly}`);
  return lines;
}

function ruleInWords(rule: string, tool: string): string {
  if (rule === 'default') return 'no rule of this profile allows it, so it asks';
  if (rule === tool) return `this profile asks before every <code>${escapeHtml(tool)}</code> call`;
  return `this profile asks first for <code>${escapeHtml(rule)}</code>`;
}

/** A line of the gate's words, whose `backticks` are code. */
function inlineHtml(text: string): string {
  return renderTelegramHtml(text).replace(/\n+/g, ' ');
}

/** The same call as the asker's chat sees it when they may not decide it: no buttons, and who may. */
export function waitingApprovalHtml(approval: ApprovalView): string {
  const deciders = (approval.deciders ?? []).map((person) => person.name);
  const waitsFor = deciders.length === 0 ? 'the owner' : deciders.length === 1 ? deciders[0]! : `${deciders.slice(0, -1).join(', ')} or ${deciders.at(-1)}`;
  return `${approvalHtml(approval).replace(/^\u{1F510} <b>Approval needed<\/b>/u, '⏳ <b>Waiting for a decision</b>')}\n\nAsked of ${escapeHtml(waitsFor)}: it goes on once they decide.`;
}

export function approvalKeyboard(callId: string): InlineKeyboardMarkup {
  return {
    inline_keyboard: [
      [
        { text: 'Allow once', callback_data: approvalCallbackData(callId, 'once') },
        { text: 'Allow for this chat', callback_data: approvalCallbackData(callId, 'chat') },
      ],
      [{ text: 'Deny', callback_data: approvalCallbackData(callId, 'deny') }],
    ],
  };
}

/** The line saying what was decided and by whom: "Allowed once by Ada", "Denied from the page". */
export function decisionLine(outcome: ApprovalOutcome): string {
  const what = outcome.decision === 'deny' ? 'Denied' : outcome.remember === 'session' ? 'Allowed for this chat' : 'Allowed once';
  switch (outcome.decider.kind) {
    case 'person':
      return `${what} by ${outcome.decider.name}`;
    case 'page':
      return `${what} from the page`;
    case 'timeout':
      return `${what}: nobody answered in time`;
    case 'stop':
      return `${what}: the run was stopped`;
    case 'rule':
      return `${what} by a rule`;
  }
}

/** The approval message once decided (sent without a keyboard, so the buttons go). */
export function decidedApprovalHtml(approval: ApprovalView, outcome: ApprovalOutcome, askedBy?: string): string {
  const mark = outcome.decision === 'allow' ? '✅' : '⛔';
  return `${approvalHtml(approval, askedBy).replace(/^\u{1F510} <b>Approval needed<\/b>/u, '🔐 <b>Approval</b>')}\n\n${mark} <b>${escapeHtml(decisionLine(outcome))}</b>`;
}

/** The callback answer for a button on an approval that is no longer waiting. */
export const staleApprovalAnswer = 'This approval is already decided.';
