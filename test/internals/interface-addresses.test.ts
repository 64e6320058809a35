// The host jail's check for new addresses reads getifaddrs(3) in Hearth's own process instead
// of starting `ip -j address` before every process that enters (issue 38: 3-6 ms of each
// server_admin `terminal` call). It must see what `ip` sees, links that are down included,
// which os.networkInterfaces() leaves out. Compared in a network namespace of its own, where
// a veth pair that is never brought up holds the addresses.
import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';

const script = `
const { bindInterfaceAddresses } = await import(${JSON.stringify(new URL('../../src/jail/interface-addresses.ts', import.meta.url).pathname)});
const { networkInterfaces } = await import('node:os');
const { execFileSync } = await import('node:child_process');
const links = JSON.parse(execFileSync('ip', ['-j', 'address', 'show'], { encoding: 'utf8' }));
console.log(JSON.stringify({
  inProcess: bindInterfaceAddresses()(),
  ip: links.flatMap((link) => link.addr_info.map((entry) => ({ family: entry.family, address: entry.local }))),
  nodeSees: Object.values(networkInterfaces()).flat().map((entry) => entry.address),
}));`;

const setUp = [
  'ip link add hearth0 type veth peer name hearth1',
  'ip address add 198.51.100.7/24 dev hearth0',
  'ip address add 2001:db8:0:0:1:0:0:1/64 dev hearth0',
  'ip address add 203.0.113.9/32 dev hearth1',
  'ip link set lo up',
].join(' && ');

function inOwnNetworkNamespace(): { outcome?: { inProcess: unknown[]; ip: unknown[]; nodeSees: string[] }; unavailable?: string } {
  const run = spawnSync('unshare', ['-rn', 'sh', '-c', `${setUp} && exec "$0" --import tsx --input-type=module -e "$1"`, process.execPath, script], { encoding: 'utf8', timeout: 30_000 });
  if (run.status !== 0) return { unavailable: `no network namespace with a veth pair here: ${run.stderr.trim().split('\n')[0]}` };
  return { outcome: JSON.parse(run.stdout) };
}

const sortedByText = (entries: unknown[]) => entries.map((entry) => JSON.stringify(entry)).sort();

const { outcome, unavailable } = inOwnNetworkNamespace();

describe.skipIf(unavailable !== undefined)('getifaddrs through koffi', () => {
  it('lists what `ip -j address` lists, addresses on links that are down included, in the same text', () => {
    expect(sortedByText(outcome!.inProcess)).toEqual(sortedByText(outcome!.ip));
    expect(outcome!.inProcess).toEqual(
      expect.arrayContaining([
        { family: 'inet', address: '198.51.100.7' },
        { family: 'inet', address: '203.0.113.9' },
        { family: 'inet6', address: '2001:db8::1:0:0:1' },
        { family: 'inet', address: '127.0.0.1' },
      ]),
    );
    // The listing Node offers would have missed them: the links were never brought up.
    expect(outcome!.nodeSees).not.toContain('198.51.100.7');
    expect(outcome!.nodeSees).toContain('127.0.0.1');
  });
});
