import type { LookupAddress } from 'node:dns';
import { once } from 'node:events';
import { createServer } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { createHttpRequestTool } from '../../src/tools/builtin/http-request.ts';
import { createNetworkGuard, NetworkGuard, type Resolve } from '../../src/tools/builtin/http/network-guard.ts';
import { canonicalAddress, NetworkPolicy, type Refusal } from '../../src/tools/builtin/http/network-policy.ts';
import { SelfAddress } from '../../src/tools/builtin/http/self-address.ts';
import type { Tool } from '../../src/tools/tool.ts';
import { closeServers, serve } from '../support/loopback-http.ts';
import { runTool } from '../support/tool-context.ts';

const tools: Tool[] = [];
afterEach(async () => {
  closeServers();
  await Promise.all(tools.splice(0).map((tool) => tool.dispose?.()));
});

describe('canonicalAddress', () => {
  it('gives one spelling per address', () => {
    expect(canonicalAddress('127.0.0.1')).toBe('127.0.0.1');
    expect(canonicalAddress('::ffff:127.0.0.1')).toBe('127.0.0.1');
    expect(canonicalAddress('[::FFFF:7F00:1]')).toBe('127.0.0.1');
    expect(canonicalAddress('0:0:0:0:0:0:0:1')).toBe('::1');
    expect(canonicalAddress('FE80::1%eth0')).toBe('fe80::1');
    expect(canonicalAddress('example.com')).toBeUndefined();
  });
});

describe('NetworkPolicy', () => {
  const kind = (policy: NetworkPolicy, address: string, port = 80) => policy.check(address, port)?.kind ?? 'allowed';

  it('always refuses cloud metadata and link-local addresses, whatever the port', () => {
    const policy = new NetworkPolicy({ blockPrivate: false, interfaceAddresses: () => [] });
    for (const address of ['169.254.169.254', '169.254.0.1', '::ffff:169.254.169.254', 'fd00:ec2::254', 'fe80::1', 'febf::1', '100.100.100.200']) {
      expect(kind(policy, address, 8080), address).toBe('metadata');
    }
    expect(kind(policy, 'fd00:ec2::253')).toBe('allowed');
  });

  it("refuses Hearth's port on loopback, unspecified and its listen address, and nothing else by default", () => {
    const self = new SelfAddress();
    self.listening([{ address: '192.168.1.20', port: 8000 }]);
    const policy = new NetworkPolicy({ blockPrivate: false, selfAddress: self, interfaceAddresses: () => ['192.168.1.20', '10.0.0.5'] });
    for (const address of ['127.0.0.1', '127.9.9.9', '::1', '::ffff:127.0.0.1', '0.0.0.0', '::', '192.168.1.20', '::ffff:192.168.1.20']) {
      expect(kind(policy, address, 8000), address).toBe('self');
    }
    // Bound to one address only: the machine's other addresses do not reach it.
    expect(kind(policy, '10.0.0.5', 8000)).toBe('allowed');
    for (const address of ['127.0.0.1', '192.168.1.20', '10.1.2.3', '172.16.0.1', 'fc00::1', '8.8.8.8']) {
      expect(kind(policy, address, 8001), address).toBe('allowed');
    }
  });

  it('refuses every interface address on the port when Hearth listens on 0.0.0.0 or ::', () => {
    for (const listen of ['0.0.0.0', '::']) {
      const self = new SelfAddress();
      self.listening([{ address: listen, port: 8000 }]);
      const policy = new NetworkPolicy({ blockPrivate: false, selfAddress: self, interfaceAddresses: () => ['10.0.0.5', '2001:db8::5', 'fe80::5'] });
      expect(kind(policy, '10.0.0.5', 8000), listen).toBe('self');
      expect(kind(policy, '2001:db8::5', 8000), listen).toBe('self');
      expect(kind(policy, '10.0.0.6', 8000), listen).toBe('allowed');
      expect(kind(policy, '10.0.0.5', 8001), listen).toBe('allowed');
    }
  });

  it('knows the configured HOST:PORT before the server listens, and the bound port after', () => {
    const self = new SelfAddress({ host: '127.0.0.1', port: 8000 });
    const policy = new NetworkPolicy({ blockPrivate: false, selfAddress: self, interfaceAddresses: () => [] });
    expect(kind(policy, '127.0.0.1', 8000)).toBe('self');
    self.listening([{ address: '127.0.0.1', port: 41234 }, '/tmp/hearth.sock']);
    expect(kind(policy, '127.0.0.1', 8000)).toBe('allowed');
    expect(kind(policy, '127.0.0.1', 41234)).toBe('self');
    expect(new SelfAddress({ host: '127.0.0.1', port: 0 }).endpoints()).toEqual([]);
  });

  it('with HTTP_BLOCK_PRIVATE refuses loopback, private ranges, their IPv4-mapped forms and this machine, not public hosts', () => {
    const policy = new NetworkPolicy({ blockPrivate: true, interfaceAddresses: () => ['203.0.113.9'] });
    const refused = [
      '127.0.0.1', '::1', '0.0.0.0', '::', '10.0.0.1', '172.16.0.1', '172.31.255.255', '192.168.0.1', '100.64.0.1',
      '100.127.255.255', 'fc00::1', 'fd12:3456::1', '::ffff:10.0.0.1', '::ffff:192.168.1.1', '203.0.113.9',
    ];
    for (const address of refused) expect(kind(policy, address), address).toBe('private');
    for (const address of ['8.8.8.8', '172.32.0.1', '100.128.0.1', '192.169.0.1', '2001:4860:4860::8888']) {
      expect(kind(policy, address), address).toBe('allowed');
    }
    expect(kind(policy.allowingPrivate(), '10.0.0.1')).toBe('allowed');
    expect(kind(policy.allowingPrivate(), '169.254.169.254')).toBe('metadata');
  });
});

/** A resolver that answers `names` and fails like the system resolver for anything else. */
function resolver(names: Record<string, string[]>, asked: string[] = []): Resolve {
  return async (hostname) => {
    asked.push(hostname);
    const addresses = names[hostname];
    if (!addresses) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
    return addresses.map((address): LookupAddress => ({ address, family: address.includes(':') ? 6 : 4 }));
  };
}

/** A loopback server standing in for Hearth: it records what reaches it. */
async function fakeHearth(): Promise<{ port: number; seen: string[] }> {
  const seen: string[] = [];
  const base = await serve((request, response) => {
    seen.push(`${request.method} ${request.url}`);
    response.writeHead(204).end();
  });
  return { port: Number(new URL(base).port), seen };
}

function guardedHttpRequest(options: Parameters<typeof createNetworkGuard>[0]): Tool {
  const tool = createHttpRequestTool({ network: createNetworkGuard(options) });
  tools.push(tool);
  return tool;
}

describe('the guard checks addresses after DNS resolution', () => {
  it("refuses a public-looking name that resolves to loopback on Hearth's port, without connecting", async () => {
    const hearth = await fakeHearth();
    const self = new SelfAddress();
    self.listening([{ address: '127.0.0.1', port: hearth.port }]);
    const asked: string[] = [];
    const tool = guardedHttpRequest({ selfAddress: self, resolve: resolver({ 'api.attacker.example': ['127.0.0.1'] }, asked) });
    const result = await runTool(tool, { method: 'DELETE', url: `http://api.attacker.example:${hearth.port}/sessions/other` });
    expect(result).toEqual({
      success: false,
      output: `refused: api.attacker.example (127.0.0.1) port ${hearth.port} is Hearth's own API. Hearth's tools may not call the server they run in; tell the person what you wanted to do there instead.`,
    });
    expect(asked).toEqual(['api.attacker.example']);
    expect(hearth.seen).toEqual([]);
  });

  it('refuses a name that resolves to the metadata service', async () => {
    const tool = guardedHttpRequest({ resolve: resolver({ 'metadata.google.internal': ['169.254.169.254'] }) });
    const result = await runTool(tool, { method: 'GET', url: 'http://metadata.google.internal/computeMetadata/v1/' });
    expect(result.success).toBe(false);
    expect(result.output).toMatch(/^refused: metadata\.google\.internal \(169\.254\.169\.254\) port 80 is the cloud metadata service/);
  });

  it('drops the refused addresses of a name and connects to an allowed one, never to a refused one', async () => {
    // Two servers on one port, on 127.0.0.2 (refused by this policy) and 127.0.0.1 (allowed); the name lists the refused one first.
    const allowed = await fakeHearth();
    const refusedSeen: string[] = [];
    const refusedServer = createServer((request, response) => {
      refusedSeen.push(`${request.method} ${request.url}`);
      response.writeHead(204).end();
    });
    refusedServer.listen(allowed.port, '127.0.0.2');
    await once(refusedServer, 'listening');
    try {
      class Refusing127002 extends NetworkPolicy {
        override check(address: string, port: number): Refusal | undefined {
          return canonicalAddress(address) === '127.0.0.2' ? { kind: 'self', address: '127.0.0.2', port } : undefined;
        }
      }
      const tool = createHttpRequestTool({
        network: new NetworkGuard({ policy: new Refusing127002({ blockPrivate: false }), resolve: resolver({ 'mixed.example': ['127.0.0.2', '127.0.0.1'] }) }),
      });
      tools.push(tool);
      const result = await runTool(tool, { method: 'GET', url: `http://mixed.example:${allowed.port}/ok` });
      expect(result).toMatchObject({ success: true, output: expect.stringMatching(/^HTTP 204/) });
      expect(refusedSeen).toEqual([]);
      expect(allowed.seen).toEqual(['GET /ok']);
    } finally {
      refusedServer.close();
    }
  });

  it('checks the name of every redirect, each time it connects', async () => {
    const hearth = await fakeHearth();
    const self = new SelfAddress();
    self.listening([{ address: '127.0.0.1', port: hearth.port }]);
    const redirector = await serve((_request, response) => {
      response.writeHead(301, { location: `http://rebound.example:${hearth.port}/sessions/other` }).end();
    });
    const asked: string[] = [];
    const tool = guardedHttpRequest({ selfAddress: self, resolve: resolver({ 'start.example': ['127.0.0.1'], 'rebound.example': ['127.0.0.1'] }, asked) });
    const result = await runTool(tool, { method: 'GET', url: `http://start.example:${new URL(redirector).port}/` });
    expect(result.success).toBe(false);
    expect(result.output).toBe(
      `refused: rebound.example (127.0.0.1) port ${hearth.port} is Hearth's own API. Hearth's tools may not call the server they run in; tell the person what you wanted to do there instead. (http://start.example:${new URL(redirector).port}/ redirected there.)`,
    );
    expect(asked).toEqual(['start.example', 'rebound.example']);
    expect(hearth.seen).toEqual([]);
  });

  it('with HTTP_BLOCK_PRIVATE refuses a name resolving only to private addresses, naming the setting', async () => {
    const service = await fakeHearth();
    const tool = guardedHttpRequest({ blockPrivate: true, resolve: resolver({ 'nas.lan': ['192.168.1.10', '127.0.0.1'] }) });
    const result = await runTool(tool, { method: 'GET', url: `http://nas.lan:${service.port}/` });
    expect(result.output).toBe(
      `refused: nas.lan (192.168.1.10) port ${service.port} is a private address and HTTP_BLOCK_PRIVATE is on, so only public hosts are reachable. Ask the person to set HTTP_BLOCK_PRIVATE=false if this host must be reached.`,
    );
    expect(service.seen).toEqual([]);
  });

  it('reports a name that does not resolve as such', async () => {
    const tool = guardedHttpRequest({ resolve: resolver({}) });
    const result = await runTool(tool, { method: 'GET', url: 'http://nowhere.example/' });
    expect(result.output).toMatch(/^The host name nowhere\.example could not be resolved/);
  });
});
