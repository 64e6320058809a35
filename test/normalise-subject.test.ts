import { describe, expect, it } from 'vitest';
import { normaliseSubject, normaliseUrl } from '../src/approvals/normalise-subject.ts';
import { buildPolicy, judge, type ApprovalPolicy } from '../src/approvals/policy.ts';

const lock = 'http://ha.local:8123/api/services/lock/unlock';

describe('normaliseUrl: every spelling of one request reads the same', () => {
  it.each([
    ['a dot segment', 'http://ha.local:8123/api/services/./lock/unlock'],
    ['backslashes', 'http://ha.local:8123/api\\services\\lock\\unlock'],
    ['a tab inside a word', 'http://ha.local:8123/api/services/lo\tck/unlock'],
    ['a newline inside a word', 'http://ha.local:8123/api/services/lo\nck/unlock'],
    ['escaped unreserved characters', 'http://ha.local:8123/api/services/%6c%6fck/unlock'],
    ['upper-case escapes', 'http://ha.local:8123/api/services/%6C%6F%63%6B/unlock'],
    ['an escaped double-dot segment', 'http://ha.local:8123/api/x/%2e%2e/services/lock/unlock'],
    ['a mixed double-dot segment', 'http://ha.local:8123/api/x/.%2E/services/lock/unlock'],
    ['an upper-case scheme and host', 'HTTP://HA.LOCAL:8123/api/services/lock/unlock'],
    ['a trailing dot on the host', 'http://ha.local.:8123/api/services/lock/unlock'],
    ['several trailing dots', 'http://ha.local..:8123/api/services/lock/unlock'],
    ['upper-case domain and service', 'http://ha.local:8123/api/services/LOCK/Unlock'],
    ['a trailing slash', 'http://ha.local:8123/api/services/lock/unlock/'],
    ['escaped slashes', 'http://ha.local:8123/api/services%2flock%2Funlock'],
    ['leading and trailing spaces', '  http://ha.local:8123/api/services/lock/unlock '],
  ])('%s', (_name, spelling) => {
    expect(normaliseUrl(spelling)).toBe(lock);
  });

  it('keeps what makes a request different, written canonically', () => {
    expect(normaliseUrl('http://example.com:80/a')).toBe('http://example.com/a');
    expect(normaliseUrl('https://example.com:443/a')).toBe('https://example.com/a');
    expect(normaliseUrl('http://example.com:8080/a')).toBe('http://example.com:8080/a');
    expect(normaliseUrl('http://User:Secret@Example.COM/a')).toBe('http://User:Secret@example.com/a');
    expect(normaliseUrl('http://[::FFFF:127.0.0.1]:8123/a')).toBe('http://[::ffff:7f00:1]:8123/a');
    expect(normaliseUrl('http://[2001:DB8::1]/a')).toBe('http://[2001:db8::1]/a');
    expect(normaliseUrl('http://0x7f.1/a')).toBe('http://127.0.0.1/a');
    expect(normaliseUrl('http://bücher.example/a')).toBe('http://xn--bcher-kva.example/a');
    expect(normaliseUrl('http://example.com/a%2fb?q=%41%2f#%7e')).toBe('http://example.com/a%2Fb?q=A%2F#~');
    expect(normaliseUrl('http://example.com/a b')).toBe('http://example.com/a%20b');
    expect(normaliseUrl('http://example.com/api/services/lock')).toBe('http://example.com/api/services/lock');
    expect(normaliseUrl('http://example.com/proxy/API/Services/Cover/Open_Cover?x=1')).toBe('http://example.com/proxy/api/services/cover/open_cover?x=1');
    expect(normaliseUrl('not a url')).toBeUndefined();
    expect(normaliseUrl('http://')).toBeUndefined();
  });
});

describe('normaliseSubject', () => {
  const http = ['word', 'url'] as const;

  it('normalises the URL part of `<METHOD> <url>` and leaves the method alone', () => {
    expect(normaliseSubject('POST http://HA.local:8123/api/services/./lock/unlock', http)).toEqual({ subject: `POST ${lock}`, hiddenCharacters: false });
    expect(normaliseSubject('GET https://example.com/a b c', http)).toEqual({ subject: 'GET https://example.com/a%20b%20c', hiddenCharacters: false });
  });

  it('marks whitespace and control characters other than the separators as hidden, wherever they are', () => {
    expect(normaliseSubject('POST http://ha.local:8123/api/services/lo\tck/unlock', http)).toEqual({ subject: `POST ${lock}`, hiddenCharacters: true });
    expect(normaliseSubject('POST  http://example.com/', http)).toEqual({ subject: 'POST http://example.com/', hiddenCharacters: false });
    expect(normaliseSubject('POST http://example.com/\u200b', http).hiddenCharacters).toBe(true);
    expect(normaliseSubject('POST not\u00a0a url', http)).toEqual({ subject: 'POST not\u00a0a url', hiddenCharacters: true });

    expect(normaliseSubject('read notes/my plan.md', ['text']).hiddenCharacters).toBe(false);
    expect(normaliseSubject('read notes/my\tplan.md', ['text']).hiddenCharacters).toBe(true);
    expect(normaliseSubject('read notes/\u202eplan.md', ['text']).hiddenCharacters).toBe(true);
    expect(normaliseSubject('read notes/\u0007plan.md', ['text']).hiddenCharacters).toBe(true);

    expect(normaliseSubject('ls\t-la /var/log', ['command']).hiddenCharacters).toBe(false);
    expect(normaliseSubject('ls\u000b-la', ['command']).hiddenCharacters).toBe(true);
    expect(normaliseSubject('ls\u00a0-la', ['command']).hiddenCharacters).toBe(true);
    expect(normaliseSubject('web1 uptime', ['command'])).toEqual({ subject: 'web1 uptime', hiddenCharacters: false });
  });

  it('reads an image path as text and an image URL as a URL', () => {
    expect(normaliseSubject('photos/receipt 1.jpg', ['url'])).toEqual({ subject: 'photos/receipt 1.jpg', hiddenCharacters: false });
    expect(normaliseSubject('HTTPS://Example.org/./chart.png', ['url'])).toEqual({ subject: 'https://example.org/chart.png', hiddenCharacters: false });
  });
});

describe('judged after normalising', () => {
  const policy = (definition: Parameters<typeof buildPolicy>[0]): ApprovalPolicy => {
    const built = buildPolicy(definition);
    if (typeof built === 'string') throw new Error(built);
    return built;
  };
  const httpCall = (subject: string) => ({ tool: 'http_request', commandSubject: false, ...normaliseSubject(subject, ['word', 'url']) });

  it("smart_home's lock rule asks for each spelling", () => {
    const smartHome = policy({ default: 'allow', ask: ['http_request(POST */api/services/lock/*)'] });
    for (const url of ['http://h/api/services/./lock/unlock', 'http://h/api\\services\\lock\\unlock', 'http://h/api/services/lo\tck/unlock', 'http://h/api/services/%6c%6fck/unlock']) {
      expect(judge(smartHome, httpCall(`POST ${url}`)).verdict, url).toBe('ask');
    }
    expect(judge(smartHome, httpCall('POST http://h/api/services/light/turn_on')).verdict).toBe('allow');
  });

  it('a hidden character keeps every allow glob off, but deny and ask still match and a bare tool name still allows', () => {
    const secretary = policy({ default: 'ask', allow: ['http_request(GET *)'], deny: ['http_request(GET http://blocked.example/*)'] });
    expect(judge(secretary, httpCall('GET http://example.com/a')).verdict).toBe('allow');
    expect(judge(secretary, httpCall('GET http://example.com/a\tb'))).toEqual({ verdict: 'ask', rule: 'default' });
    expect(judge(secretary, httpCall('GET http://BLOCKED.example./x\ty')).verdict).toBe('deny');
    expect(judge(policy({ default: 'ask', allow: ['http_request'] }), httpCall('GET http://example.com/a\tb')).verdict).toBe('allow');
  });
});
