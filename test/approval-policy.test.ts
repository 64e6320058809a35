import { describe, expect, it } from 'vitest';
import { buildPolicy, globToRegExp, judge, parseRule, type ApprovalPolicy } from '../src/approvals/policy.ts';
import { parseProfile } from '../src/profiles/load-profiles.ts';

function policy(definition: Parameters<typeof buildPolicy>[0]): ApprovalPolicy {
  const built = buildPolicy(definition);
  if (typeof built === 'string') throw new Error(built);
  return built;
}

const command = (tool: string, subject: string) => ({ tool, subject, commandSubject: true });

describe('approval rules', () => {
  it('parses a bare tool name and tool(glob), and explains anything else', () => {
    expect(parseRule('terminal')).toEqual({ text: 'terminal', tool: 'terminal' });
    expect(parseRule('terminal(ls *)')).toMatchObject({ tool: 'terminal', pattern: expect.any(RegExp) });
    expect(parseRule('terminal ls')).toMatch(/is not a rule/);
    expect(parseRule('terminal()')).toMatch(/empty pattern/);
  });

  it('matches * over any run of characters, one word before a space, and a trailing " *" over nothing too', () => {
    const ls = globToRegExp('ls *');
    expect(['ls', 'ls -la', 'ls -la /var/log'].every((subject) => ls.test(subject))).toBe(true);
    expect(ls.test('lsblk')).toBe(false);

    const anyHost = globToRegExp('* systemctl status *');
    expect(anyHost.test('web1 systemctl status nginx')).toBe(true);
    expect(anyHost.test('web1 rm -rf /tmp/x systemctl status')).toBe(false);

    expect(globToRegExp('lock.*').test('lock.front_door')).toBe(true);
    expect(globToRegExp('lock.*').test('lockXfront')).toBe(false);
    expect(globToRegExp('rm -rf /*').test('rm -rf /home/ada')).toBe(true);
  });

  it('decides deny, then allow, then ask, then the default', () => {
    const rules = policy({
      default: 'ask',
      deny: ['terminal(rm *)'],
      allow: ['terminal', 'terminal(echo *)'],
      ask: ['terminal(echo secret*)'],
    });
    expect(judge(rules, command('terminal', 'rm -rf build'))).toEqual({ verdict: 'deny', rule: 'terminal(rm *)' });
    expect(judge(rules, command('terminal', 'echo secret')).verdict).toBe('allow');
    expect(judge(rules, command('other', 'x'))).toEqual({ verdict: 'ask', rule: 'default' });
    expect(judge(policy({ ask: ['filesystem(delete *)'] }), { tool: 'filesystem', subject: 'delete /tmp/a', commandSubject: false }).verdict).toBe(
      'ask',
    );
  });

  it('never lets an allow glob match a command line with shell control characters', () => {
    const rules = policy({ default: 'ask', allow: ['terminal(echo *)'] });
    for (const chained of ['echo a; touch x', 'echo a && touch x', 'echo a | sh', 'echo `id`', 'echo $(id)', 'echo a > x', 'echo a\ntouch x', 'echo <x']) {
      expect(judge(rules, command('terminal', chained)), chained).toEqual({ verdict: 'ask', rule: 'default' });
    }
    expect(judge(rules, command('terminal', 'echo hello world')).verdict).toBe('allow');
    // A URL is no command line: & and ; in a query string are plain characters there.
    const web = policy({ default: 'ask', allow: ['http_request(GET *)'] });
    expect(judge(web, { tool: 'http_request', subject: 'GET https://example.org/?a=1&b=2', commandSubject: false }).verdict).toBe('allow');
  });

  it('judges tabs and runs of spaces as single spaces, so a deny rule is not dodged by spacing', () => {
    const rules = policy({ deny: ['terminal(rm -rf *)'] });
    expect(judge(rules, command('terminal', '  rm\t -rf   /srv')).verdict).toBe('deny');
  });

  it('asks when the tool insists, unless a deny rule refuses first', () => {
    const rules = policy({ allow: ['write_tool'], deny: ['write_tool(evil*)'] });
    const insisting = { tool: 'write_tool', commandSubject: false, mustAsk: 'it asks for child processes' };
    expect(judge(rules, { ...insisting, subject: 'fetch_feed' })).toEqual({ verdict: 'ask', rule: 'tool', reason: 'it asks for child processes' });
    expect(judge(rules, { ...insisting, subject: 'evil_tool' }).verdict).toBe('deny');
  });

  it('never turns a default of deny into a question: only a rule naming the call lets the tool ask', () => {
    const insisting = { tool: 'filesystem', subject: 'write /home/ann/.bashrc', commandSubject: false, mustAsk: 'this file runs at login' };
    expect(judge(policy({ default: 'deny' }), insisting)).toEqual({ verdict: 'deny', rule: 'default' });
    expect(judge(policy({ default: 'deny', allow: ['filesystem'] }), insisting)).toEqual({ verdict: 'ask', rule: 'tool', reason: 'this file runs at login' });
    expect(judge(policy({ default: 'deny', ask: ['filesystem(write *)'] }), insisting).verdict).toBe('ask');
    expect(judge(policy({ default: 'ask' }), insisting).verdict).toBe('ask');
  });

  it('asks about a destructive tool under a default of allow, while deny and allow rules still decide', () => {
    const destructive = { tool: 'fs__write_file', subject: 'fs__write_file', commandSubject: false, destructive: true };
    // No approvals block: the default is allow, and a destructive tool is put to the person.
    expect(judge(policy(undefined), destructive)).toEqual({ verdict: 'ask', rule: 'default (the tool is marked destructive)' });
    expect(judge(policy({ default: 'allow', ask: ['terminal'] }), destructive)).toEqual({ verdict: 'ask', rule: 'default (the tool is marked destructive)' });
    expect(judge(policy({ allow: ['fs__write_file'] }), destructive)).toEqual({ verdict: 'allow', rule: 'fs__write_file' });
    expect(judge(policy({ deny: ['fs__write_file'] }), destructive)).toEqual({ verdict: 'deny', rule: 'fs__write_file' });
    expect(judge(policy({ ask: ['fs__write_file'] }), destructive)).toEqual({ verdict: 'ask', rule: 'fs__write_file' });
    // Stricter defaults are left as they are.
    expect(judge(policy({ default: 'deny' }), destructive)).toEqual({ verdict: 'deny', rule: 'default' });
    expect(judge(policy({ default: 'ask' }), destructive)).toEqual({ verdict: 'ask', rule: 'default' });
    // A tool that is not destructive runs under the default of allow as before.
    expect(judge(policy(undefined), { ...destructive, destructive: false })).toEqual({ verdict: 'allow', rule: 'default' });
  });

  it('come from profile front matter, and a bad rule is a profile error naming the list', () => {
    const text = (approvals: string) => `---\nid: guarded\nname: Guarded\n${approvals}\n---\nPrompt.\n`;
    const parsed = parseProfile('/profiles/guarded.md', text('approvals:\n  default: ask\n  allow: ["terminal(ls *)"]'));
    expect(parsed.ok && parsed.profile.approvals.default).toBe('ask');
    const broken = parseProfile('/profiles/guarded.md', text('approvals:\n  deny: ["rm -rf"]'));
    expect(broken.ok ? '' : broken.error.message).toMatch(/approvals\.deny: "rm -rf" is not a rule/);
    const unknownVerdict = parseProfile('/profiles/guarded.md', text('approvals:\n  default: maybe'));
    expect(unknownVerdict.ok ? '' : unknownVerdict.error.message).toMatch(/default must be one of: allow, ask, deny/);
  });
});
