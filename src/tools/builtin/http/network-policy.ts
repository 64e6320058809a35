import { BlockList, isIP } from 'node:net';
import { networkInterfaces } from 'node:os';
import type { SelfAddress } from './self-address.ts';

export type RefusalKind = 'self' | 'metadata' | 'private';

export interface Refusal {
  kind: RefusalKind;
  /** The address that would have been connected to. */
  address: string;
  port: number;
}

type Family = 'ipv4' | 'ipv6';

function blockList(ranges: [string, number, Family][]): BlockList {
  const list = new BlockList();
  for (const [network, prefix, family] of ranges) list.addSubnet(network, prefix, family);
  return list;
}

// Cloud instance metadata (AWS, GCP, Azure, Oracle: 169.254.169.254; AWS over IPv6: fd00:ec2::254;
// Alibaba: 100.100.100.200) holds the machine's credentials. The link-local ranges around it go too.
const metadataRanges = blockList([
  ['169.254.0.0', 16, 'ipv4'],
  ['100.100.100.200', 32, 'ipv4'],
  ['fe80::', 10, 'ipv6'],
  ['fd00:ec2::254', 128, 'ipv6'],
]);

// Connecting to an unspecified address (0.0.0.0, ::) reaches this machine, as loopback does.
const thisMachineRanges = blockList([
  ['127.0.0.0', 8, 'ipv4'],
  ['0.0.0.0', 8, 'ipv4'],
  ['::1', 128, 'ipv6'],
  ['::', 128, 'ipv6'],
]);

const privateRanges = blockList([
  ['10.0.0.0', 8, 'ipv4'],
  ['172.16.0.0', 12, 'ipv4'],
  ['192.168.0.0', 16, 'ipv4'],
  ['100.64.0.0', 10, 'ipv4'],
  ['fc00::', 7, 'ipv6'],
]);

/**
 * One spelling per address: no zone index, IPv6 compressed and lower-case, and IPv4-mapped IPv6
 * (`::ffff:127.0.0.1`, `::ffff:7f00:1`) as the IPv4 address it is. Undefined for anything but an IP.
 */
export function canonicalAddress(text: string): string | undefined {
  const bare = text.replace(/^\[|\]$/g, '').replace(/%.*$/, '');
  const family = isIP(bare);
  if (family === 4) return bare;
  if (family !== 6) return undefined;
  const compressed = new URL(`http://[${bare}]/`).hostname.slice(1, -1);
  const mapped = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(compressed);
  if (!mapped) return compressed;
  const high = parseInt(mapped[1]!, 16);
  const low = parseInt(mapped[2]!, 16);
  return [high >> 8, high & 0xff, low >> 8, low & 0xff].join('.');
}

function inRanges(list: BlockList, canonical: string): boolean {
  return list.check(canonical, isIP(canonical) === 4 ? 'ipv4' : 'ipv6');
}

function machineAddresses(): string[] {
  return Object.values(networkInterfaces()).flatMap((entries) => (entries ?? []).map((entry) => entry.address));
}

export interface NetworkPolicyOptions {
  /** HTTP_BLOCK_PRIVATE: also refuse loopback, private ranges and this machine's own addresses. */
  blockPrivate: boolean;
  /** Where Hearth listens; its port is refused on loopback, on its listen address and on this machine's addresses. */
  selfAddress?: SelfAddress;
  /** This machine's interface addresses; `os.networkInterfaces()` by default, read at each check. */
  interfaceAddresses?: () => string[];
}

/** Decides, for an address about to be connected to, whether a tool may connect to it. */
export class NetworkPolicy {
  readonly blockPrivate: boolean;
  readonly #selfAddress: SelfAddress | undefined;
  readonly #interfaceAddresses: () => string[];

  constructor(options: NetworkPolicyOptions) {
    this.blockPrivate = options.blockPrivate;
    this.#selfAddress = options.selfAddress;
    this.#interfaceAddresses = options.interfaceAddresses ?? machineAddresses;
  }

  /** A policy like this one that leaves private addresses reachable (for URLs the person configured). */
  allowingPrivate(): NetworkPolicy {
    return new NetworkPolicy({ blockPrivate: false, selfAddress: this.#selfAddress, interfaceAddresses: this.#interfaceAddresses });
  }

  /** Why connecting to `address` on `port` is refused; undefined when it is allowed. */
  check(address: string, port: number): Refusal | undefined {
    const canonical = canonicalAddress(address);
    if (canonical === undefined) throw new TypeError(`NetworkPolicy.check needs an IP address, not "${address}"`);
    if (inRanges(metadataRanges, canonical)) return { kind: 'metadata', address: canonical, port };
    if (this.#isSelf(canonical, port)) return { kind: 'self', address: canonical, port };
    if (this.blockPrivate && this.#isPrivate(canonical)) return { kind: 'private', address: canonical, port };
    return undefined;
  }

  #isSelf(canonical: string, port: number): boolean {
    for (const endpoint of this.#selfAddress?.endpoints() ?? []) {
      if (endpoint.port !== port) continue;
      if (inRanges(thisMachineRanges, canonical)) return true;
      const listenAddress = canonicalAddress(endpoint.address);
      if (listenAddress === undefined) continue;
      if (listenAddress === canonical) return true;
      // Listening on every interface: each of this machine's addresses reaches Hearth.
      if ((listenAddress === '0.0.0.0' || listenAddress === '::') && this.#isMachineAddress(canonical)) return true;
    }
    return false;
  }

  #isPrivate(canonical: string): boolean {
    return inRanges(thisMachineRanges, canonical) || inRanges(privateRanges, canonical) || this.#isMachineAddress(canonical);
  }

  #isMachineAddress(canonical: string): boolean {
    return this.#interfaceAddresses().some((own) => canonicalAddress(own) === canonical);
  }
}

/** A sentence the model can act on: what was refused and why. */
export function describeRefusal(refusal: Refusal, hostname: string): string {
  const bareHost = hostname.replace(/^\[|\]$/g, '');
  const target =
    canonicalAddress(bareHost) === refusal.address ? `${refusal.address} port ${refusal.port}` : `${bareHost} (${refusal.address}) port ${refusal.port}`;
  switch (refusal.kind) {
    case 'self':
      return `refused: ${target} is Hearth's own API. Hearth's tools may not call the server they run in; tell the person what you wanted to do there instead.`;
    case 'metadata':
      return `refused: ${target} is the cloud metadata service (link-local addresses), which holds this machine's credentials; Hearth's tools never connect to it.`;
    case 'private':
      return `refused: ${target} is a private address and HTTP_BLOCK_PRIVATE is on, so only public hosts are reachable. Ask the person to set HTTP_BLOCK_PRIVATE=false if this host must be reached.`;
  }
}
