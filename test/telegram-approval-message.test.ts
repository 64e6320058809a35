import { describe, expect, it } from 'vitest';
import {
  approvalCallbackData,
  approvalCallbackKey,
  approvalHtml,
  approvalKeyboard,
  decidedApprovalHtml,
  decisionLine,
  decisionOf,
  parseApprovalCallback,
  type ApprovalView,
} from '../src/channels/telegram/approval-message.ts';
import { parseTelegramHtml } from './support/telegram-html.ts';

const approval: ApprovalView = {
  call_id: 'call_1_0',
  tool: 'terminal',
  subject: 'rm -rf build && echo "<done>"',
  reason: 'terminal asks for commands that are not read-only',
  not_read_only: '`rm` removes files',
};

function parsed(html: string) {
  const result = parseTelegramHtml(html);
  if (!result.ok) throw new Error(result.description);
  return result;
}

function codeIn(message: ReturnType<typeof parsed>): string[] {
  return message.entities.filter((entity) => entity.type === 'code').map((entity) => message.text.slice(entity.offset, entity.offset + entity.length));
}

describe('approval message', () => {
  it('shows the tool, the subject in a code block, and why it asks', () => {
    const message = parsed(approvalHtml(approval));
    expect(message.text).toBe(
      '🔐 Approval needed: terminal\nrm -rf build && echo "<done>"\nWhy: terminal asks for commands that are not read-only\nNot read-only: rm removes files',
    );
    const pre = message.entities.find((entity) => entity.type === 'pre')!;
    expect(message.text.slice(pre.offset, pre.offset + pre.length)).toBe(approval.subject);
    expect(codeIn(message)).toEqual(['terminal', 'rm']);
  });

  it("says the gate's rule in words, and a missed read-only rule as what makes the command write", () => {
    const why = (view: Partial<ApprovalView>) => parsed(approvalHtml({ ...approval, ...view })).text.split('\n').slice(2).join('\n');
    const missed = parsed(approvalHtml({ ...approval, subject: 'sqlite3 notes.db -D out.sql', reason: 'rule terminal(readonly)', not_read_only: '`-D` writes a file' }));
    expect(missed.text.split('\n').slice(2)).toEqual(['Why: not read-only: -D writes a file']);
    expect(codeIn(missed)).toEqual(['terminal', '-D']);
    expect(why({ reason: 'rule terminal', not_read_only: undefined })).toBe('Why: this profile asks before every terminal call');
    expect(why({ reason: 'rule terminal(rm *)', not_read_only: undefined })).toBe('Why: this profile asks first for terminal(rm *)');
    expect(why({ reason: 'rule default', not_read_only: undefined })).toBe('Why: no rule of this profile allows it, so it asks');
    expect(why({ reason: 'Asked because the tool can destroy or overwrite something, and no rule allows it', not_read_only: undefined })).toBe(
      'Why: Asked because the tool can destroy or overwrite something, and no rule allows it',
    );
    expect(approvalHtml({ ...approval, reason: 'rule terminal', not_read_only: undefined })).not.toContain('rule terminal');
  });

  it('cuts a very long subject so the message stays within Telegram\'s limit', () => {
    const message = parsed(approvalHtml({ ...approval, subject: '<x>'.repeat(5_000) }));
    expect(message.text.length).toBeLessThanOrEqual(4096);
    expect(message.text).toContain('…');
  });

  it('offers Allow once, Allow for this chat and Deny, with callback data that leads back to the call', () => {
    const keyboard = approvalKeyboard(approval.call_id);
    const buttons = keyboard.inline_keyboard.flat() as Array<{ text: string; callback_data: string }>;
    expect(buttons.map((button) => button.text)).toEqual(['Allow once', 'Allow for this chat', 'Deny']);
    expect(buttons.map((button) => parseApprovalCallback(button.callback_data))).toEqual([
      { choice: 'once', key: 'call_1_0' },
      { choice: 'chat', key: 'call_1_0' },
      { choice: 'deny', key: 'call_1_0' },
    ]);
    expect(buttons.map((button) => decisionOf(parseApprovalCallback(button.callback_data)!.choice))).toEqual([
      { decision: 'allow', remember: 'once' },
      { decision: 'allow', remember: 'session' },
      { decision: 'deny', remember: 'once' },
    ]);
  });

  it('keeps callback data within 64 bytes for any call id, matching it by a digest when it is long', () => {
    const longId = `call_${'é'.repeat(80)}`;
    const data = approvalCallbackData(longId, 'chat');
    expect(Buffer.byteLength(data, 'utf8')).toBeLessThanOrEqual(64);
    expect(parseApprovalCallback(data)).toEqual({ choice: 'chat', key: approvalCallbackKey(longId) });
    expect(approvalCallbackKey(longId)).not.toBe(approvalCallbackKey(`${longId}x`));
    const edge = 'x'.repeat(59);
    expect(approvalCallbackKey(edge)).toBe(edge);
    expect(Buffer.byteLength(approvalCallbackData(edge, 'once'))).toBe(64);
    expect(approvalCallbackKey('x'.repeat(60))).toMatch(/^#/);
    expect(parseApprovalCallback('ss:some-session')).toBeUndefined();
  });

  it('says who decided, by Telegram or from the page, and shows it in the edited message', () => {
    expect(decisionLine({ decision: 'allow', remember: 'once', decider: { kind: 'person', name: 'Ada' } })).toBe('Allowed once by Ada');
    expect(decisionLine({ decision: 'allow', remember: 'session', decider: { kind: 'person', name: 'Ada' } })).toBe('Allowed for this chat by Ada');
    expect(decisionLine({ decision: 'deny', remember: 'once', decider: { kind: 'page' } })).toBe('Denied from the page');
    expect(decisionLine({ decision: 'deny', remember: 'once', decider: { kind: 'timeout' } })).toBe('Denied: nobody answered in time');
    const edited = parsed(decidedApprovalHtml(approval, { decision: 'deny', remember: 'once', decider: { kind: 'person', name: 'Ada <&>' } }));
    expect(edited.text).toContain('rm -rf build');
    expect(edited.text.endsWith('⛔ Denied by Ada <&>')).toBe(true);
  });
});
