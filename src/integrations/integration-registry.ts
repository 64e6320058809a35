import { EventEmitter } from 'node:events';

/** `removed` is only ever announced, when an integration is taken out (an MCP server deleted from mcp.json); it is never listed. */
export type IntegrationState = 'connected' | 'connecting' | 'failed' | 'not_configured' | 'removed';

/** One connection Hearth keeps to something outside it: Home Assistant, an MQTT broker, an MCP server, a channel. */
export interface IntegrationStatus {
  name: string;
  status: IntegrationState;
  /** Why it failed or is not configured, in words a person can act on. */
  message?: string;
  /** What it holds, e.g. `{entities: 31, areas: 6}` for Home Assistant. */
  details: Record<string, unknown>;
}

interface IntegrationRegistryEvents {
  changed: [IntegrationStatus];
}

/**
 * The status of every integration, for `GET /integrations` and the `integration_status`
 * event of /ws/events. Each integration reports its own changes; an unchanged report is
 * not announced again. One that is taken out is announced once more, as `removed`.
 */
export class IntegrationRegistry extends EventEmitter<IntegrationRegistryEvents> {
  private readonly statuses = new Map<string, IntegrationStatus>();

  report(status: IntegrationStatus): void {
    const previous = this.statuses.get(status.name);
    this.statuses.set(status.name, status);
    if (!previous || JSON.stringify(previous) !== JSON.stringify(status)) this.emit('changed', status);
  }

  /** Takes an integration out of the list and announces it as `removed`; nothing when it was not there. */
  remove(name: string): void {
    if (!this.statuses.delete(name)) return;
    this.emit('changed', { name, status: 'removed', details: {} });
  }

  get(name: string): IntegrationStatus | undefined {
    return this.statuses.get(name);
  }

  list(): IntegrationStatus[] {
    return [...this.statuses.values()].sort((left, right) => left.name.localeCompare(right.name));
  }
}
