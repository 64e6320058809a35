import { describe, expect, it } from 'vitest';
import { useHearth } from './support/hearth-server.ts';

const start = useHearth();

/** The Content-Security-Policy header as directive → sources. */
function policy(header: string | null): Map<string, string[]> {
  const directives = new Map<string, string[]>();
  for (const part of (header ?? '').split(';')) {
    const [name, ...sources] = part.trim().split(/\s+/);
    if (name) directives.set(name, sources);
  }
  return directives;
}

describe('security headers', () => {
  it('serves the page with a CSP that allows only its own scripts, styles and sockets and no framing', async () => {
    const hearth = await start();
    const response = await fetch(`${hearth.baseUrl}/`);
    expect(response.status).toBe(200);
    expect(await response.text()).toContain('<script type="module" src="/app/main.js">');
    const csp = policy(response.headers.get('content-security-policy'));
    expect(csp.get('default-src')).toEqual(["'self'"]);
    expect(csp.get('script-src')).toEqual(["'self'"]);
    expect(csp.get('style-src')).toEqual(["'self'"]);
    expect(csp.get('connect-src')).toEqual(["'self'"]);
    expect(csp.get('img-src')).toEqual(["'self'", 'data:', 'blob:']);
    expect(csp.get('object-src')).toEqual(["'none'"]);
    expect(csp.get('frame-ancestors')).toEqual(["'none'"]);
    // An http:// page on a home network must keep its ws:// socket.
    expect(csp.has('upgrade-insecure-requests')).toBe(false);
    expect(response.headers.get('x-content-type-options')).toBe('nosniff');
    expect(response.headers.get('strict-transport-security')).toBeNull();
  });

  it('sends the same headers with API answers and errors', async () => {
    const hearth = await start();
    for (const url of ['/health', '/sessions/no-such-session']) {
      const response = await fetch(hearth.baseUrl + url);
      expect(response.headers.get('x-content-type-options'), url).toBe('nosniff');
      expect(policy(response.headers.get('content-security-policy')).get('frame-ancestors'), url).toEqual(["'none'"]);
    }
  });
});
