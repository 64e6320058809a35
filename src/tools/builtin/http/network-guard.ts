import { lookup as dnsLookup } from 'node:dns/promises';
import type { LookupAddress } from 'node:dns';
import { isIP, type LookupFunction } from 'node:net';
import type { Agent, buildConnector } from 'undici';
import { describeRefusal, NetworkPolicy, type Refusal } from './network-policy.ts';
import type { SelfAddress } from './self-address.ts';

/** A connection the network policy refused; fetch reports it as the `cause` of its TypeError. */
export class NetworkRefusedError extends Error {
  override name = 'NetworkRefusedError';
  readonly code = 'HEARTH_NETWORK_REFUSED';

  constructor(
    readonly refusal: Refusal,
    readonly hostname: string,
  ) {
    super(describeRefusal(refusal, hostname));
  }
}

/** Every address a host name resolves to (dns.lookup, so /etc/hosts counts). */
export type Resolve = (hostname: string, family: number) => Promise<LookupAddress[]>;

export interface NetworkGuardOptions {
  policy: NetworkPolicy;
  /** Name resolution; the system resolver by default. Tests give their own. */
  resolve?: Resolve;
}

type Undici = Pick<typeof import('undici'), 'fetch' | 'Agent' | 'buildConnector'>;

// undici weighs a few MB: it loads on the first network tool call, not at start.
let loadingUndici: Promise<Undici> | undefined;
const loadUndici = (): Promise<Undici> =>
  (loadingUndici ??= import('undici').then(({ fetch, Agent, buildConnector }) => ({ fetch, Agent, buildConnector })));

const systemResolve: Resolve = (hostname, family) => dnsLookup(hostname, { all: true, family });

/**
 * The network tools' fetch. It connects through an undici Agent whose connector checks the
 * address each connection is about to use, after DNS resolution and for every redirect, so a page
 * cannot steer a tool into Hearth's own API or the cloud metadata service, and a host name that
 * resolves differently at connect time (DNS rebinding) changes nothing: the addresses checked are
 * the addresses connected to. Resolved addresses that are refused are dropped; when none is left
 * the connection fails with a NetworkRefusedError saying why.
 */
export class NetworkGuard {
  readonly policy: NetworkPolicy;
  readonly #resolve: Resolve;
  #agent: Promise<{ undici: Undici; agent: Agent }> | undefined;

  constructor(options: NetworkGuardOptions) {
    this.policy = options.policy;
    this.#resolve = options.resolve ?? systemResolve;
  }

  /** Same contract as the global fetch; `dispatcher` is this guard's. */
  readonly fetch: typeof fetch = async (input, init) => {
    const { undici, agent } = await (this.#agent ??= this.#createAgent());
    const response = await undici.fetch(input as Parameters<Undici['fetch']>[0], {
      ...(init as Parameters<Undici['fetch']>[1]),
      dispatcher: agent,
    });
    return response as unknown as Response;
  };

  /** A guard that leaves private addresses reachable: for URLs the person configured, not ones the model chose. */
  allowingPrivate(): NetworkGuard {
    return this.policy.blockPrivate ? new NetworkGuard({ policy: this.policy.allowingPrivate(), resolve: this.#resolve }) : this;
  }

  /** Closes the pooled connections. */
  async close(): Promise<void> {
    const created = this.#agent;
    this.#agent = undefined;
    if (created) await (await created).agent.close();
  }

  async #createAgent(): Promise<{ undici: Undici; agent: Agent }> {
    const undici = await loadUndici();
    return { undici, agent: new undici.Agent({ connect: this.#connector(undici) }) };
  }

  #connector(undici: Undici): buildConnector.connector {
    // The port is not among what a lookup function is told, so each port gets its own connector.
    const connectors = new Map<number, buildConnector.connector>();
    return (options, callback) => {
      const port = Number(options.port) || (options.protocol === 'https:' ? 443 : 80);
      const hostname = options.hostname.replace(/^\[|\]$/g, '');
      // An IP address in the URL is connected to without any lookup: check it here.
      const literalRefusal = isIP(hostname) ? this.policy.check(hostname, port) : undefined;
      if (literalRefusal) return callback(new NetworkRefusedError(literalRefusal, hostname), null);
      let connect = connectors.get(port);
      if (!connect) {
        connect = undici.buildConnector({ lookup: this.#lookupFor(port) });
        connectors.set(port, connect);
      }
      connect(options, (error, socket) => {
        if (error) return callback(error, null);
        // What was actually connected to, checked once more before a byte of the request is sent.
        const connected = socket.remoteAddress;
        const refusal = connected === undefined ? undefined : this.policy.check(connected, socket.remotePort ?? port);
        if (!refusal) return callback(null, socket);
        socket.destroy();
        callback(new NetworkRefusedError(refusal, hostname), null);
      });
    };
  }

  #lookupFor(port: number): LookupFunction {
    return (hostname, options, callback) => {
      this.#resolve(hostname, options.family === 4 || options.family === 6 ? options.family : 0).then(
        (addresses) => {
          const allowed = addresses.filter((entry) => !this.policy.check(entry.address, port));
          if (allowed.length === 0) {
            const refusal = addresses[0] && this.policy.check(addresses[0].address, port);
            const error = refusal
              ? new NetworkRefusedError(refusal, hostname)
              : Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND', hostname });
            return callback(error, '', 0);
          }
          if (options.all) return callback(null, allowed);
          callback(null, allowed[0]!.address, allowed[0]!.family);
        },
        (error: NodeJS.ErrnoException) => callback(error, '', 0),
      );
    };
  }
}

/** The guard of Hearth's network tools: Hearth's own address and cloud metadata always refused, private ranges when HTTP_BLOCK_PRIVATE is on. */
export function createNetworkGuard(options: { blockPrivate?: boolean; selfAddress?: SelfAddress; resolve?: Resolve } = {}): NetworkGuard {
  const policy = new NetworkPolicy({ blockPrivate: options.blockPrivate ?? false, selfAddress: options.selfAddress });
  return new NetworkGuard({ policy, resolve: options.resolve });
}
