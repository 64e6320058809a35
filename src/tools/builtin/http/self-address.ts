import type { AddressInfo } from 'node:net';

export interface Endpoint {
  /** An IP address, or a host name when only the configured HOST is known. */
  address: string;
  port: number;
}

/**
 * Where Hearth itself listens, so its network tools can refuse to call it. It starts from the
 * configured HOST:PORT (when PORT is not 0) and is replaced by the bound addresses once the server
 * listens, which is the only moment the port of `PORT=0` is known.
 */
export class SelfAddress {
  #endpoints: Endpoint[];

  constructor(configured?: { host: string; port: number }) {
    this.#endpoints = configured && configured.port > 0 ? [{ address: configured.host, port: configured.port }] : [];
  }

  /** Records the addresses the server is bound to (Fastify's `app.addresses()`; a pipe's path is not one). */
  listening(addresses: readonly (string | Pick<AddressInfo, 'address' | 'port'>)[]): void {
    this.#endpoints = addresses.flatMap((bound) => (typeof bound === 'string' ? [] : [{ address: bound.address, port: bound.port }]));
  }

  endpoints(): readonly Endpoint[] {
    return this.#endpoints;
  }
}
