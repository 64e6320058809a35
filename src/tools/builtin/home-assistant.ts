import { Type, type Static } from '@sinclair/typebox';
import type { HassEntity } from 'home-assistant-js-websocket';
import type { IndexedEntity } from '../../integrations/home-assistant/entity-index.ts';
import type { HomeAssistant } from '../../integrations/home-assistant/home-assistant.ts';
import type { RestResult } from '../../integrations/home-assistant/home-assistant-rest.ts';
import type { Tool, ToolOutput } from '../tool.ts';
import { entityDetails, entityLine } from './home-assistant/entity-lines.ts';
import { summariseHistory } from './home-assistant/history-summary.ts';
import { resolveServiceCall, serviceCallSubject, unnamedGenericTargets, type ServiceCall } from './home-assistant/service-call.ts';
import { toolFailure } from '../../failure.ts';

const actions = ['search', 'state', 'call_service', 'history', 'areas', 'services'] as const;
type Action = (typeof actions)[number];

const parameters = Type.Object(
  {
    action: Type.Unsafe<Action>({ type: 'string', enum: [...actions] }),
    query: Type.Optional(Type.String({ description: 'search: everyday words, e.g. "kitchen light"' })),
    entity_id: Type.Optional(Type.String({ description: 'e.g. light.kitchen; several comma-separated' })),
    domain: Type.Optional(Type.String()),
    service: Type.Optional(Type.String({ description: 'e.g. turn_on' })),
    data: Type.Optional(Type.Record(Type.String(), Type.Unknown(), { description: 'service data, e.g. {"brightness_pct":50}' })),
    hours: Type.Optional(Type.Number({ description: 'history: hours back (default 24)' })),
  },
  { additionalProperties: false },
);

type HomeAssistantArguments = Static<typeof parameters>;

const searchLimit = 10;
const maxHistoryHours = 24 * 7;
/** How long call_service waits for the targets' state_changed when the REST answer lists none. */
const settleMs = 2_000;

const notConfigured =
  'Home Assistant is not configured. Set HA_URL (e.g. http://homeassistant.local:8123) and HA_TOKEN in Hearth\'s .env and restart Hearth. ' +
  'Make the token in Home Assistant: your profile (bottom left) → Security → Long-lived access tokens → Create token.';

function restFailure(result: Extract<RestResult<unknown>, { ok: false }>): ToolOutput {
  switch (result.reason) {
    case 'token_rejected':
      return toolFailure(`${result.message} Tell the person: make a new long-lived access token (HA profile → Security), put it in HA_TOKEN and restart Hearth.`);
    case 'unreachable':
      return toolFailure(`${result.message} Check that Home Assistant is running; Hearth reconnects by itself, so try again shortly.`);
    case 'stopped':
      return toolFailure(result.message);
    case 'refused':
      return toolFailure(result.message);
  }
}

export function createHomeAssistantTool(homeAssistant: HomeAssistant | undefined): Tool<HomeAssistantArguments> {
  function statusText(ha: HomeAssistant): string {
    const { status, message } = ha.status();
    const said = status === 'failed' ? 'Home Assistant is not connected' : `Home Assistant is ${status.replace('_', ' ')}`;
    return message ? `${said}: ${message}` : said;
  }

  function connectionNote(ha: HomeAssistant): string {
    return ha.status().status === 'connected' ? '' : `\n(${statusText(ha)}; these states may be out of date.)`;
  }

  function unavailable(ha: HomeAssistant): ToolOutput | undefined {
    if (ha.index.size > 0 || ha.status().status === 'connected') return undefined;
    return toolFailure(`${statusText(ha)}.${ha.status().status === 'connecting' ? ' Try again in a moment.' : ''}`);
  }

  function unknownEntity(ha: HomeAssistant, entityId: string): ToolOutput {
    const guesses = ha.index.search(entityId.replace(/[._]/g, ' '), 3).map((hit) => hit.entity.entityId);
    const hint = guesses.length > 0 ? ` Close matches: ${guesses.join(', ')}.` : '';
    return toolFailure(`Unknown entity "${entityId}".${hint} Use action "search" with everyday words to find the exact id.`);
  }

  function search(ha: HomeAssistant, query: string | undefined): ToolOutput {
    if (!query?.trim()) return toolFailure('Send query: everyday words such as "kitchen light" or "bedroom temperature".');
    const hits = ha.index.search(query, searchLimit);
    if (hits.length === 0) return toolFailure(`No entity matches "${query}". Try other or fewer words, or action "areas" to see the rooms.`);
    return hits.map((hit) => entityLine(hit.entity)).join('\n') + connectionNote(ha);
  }

  function state(ha: HomeAssistant, entityIds: string[]): ToolOutput {
    if (entityIds.length === 0) return toolFailure('Send entity_id, e.g. "light.kitchen" (find it with action "search").');
    const lines: string[] = [];
    for (const entityId of entityIds) {
      const entity = ha.index.get(entityId);
      if (!entity) return unknownEntity(ha, entityId);
      lines.push(entityDetails(entity));
    }
    return lines.join('\n\n') + connectionNote(ha);
  }

  async function knownServices(ha: HomeAssistant, signal: AbortSignal): Promise<Map<string, Record<string, unknown>> | RestResult<never>> {
    const result = await ha.rest.services(signal);
    if (!result.ok) return result;
    return new Map(result.body.map((entry) => [entry.domain, entry.services]));
  }

  async function callService(ha: HomeAssistant, call: ServiceCall, signal: AbortSignal): Promise<ToolOutput> {
    if (call.domain === '' || call.service === '') {
      return toolFailure('Send domain and service (e.g. domain "light", service "turn_on") with entity_id; action "services" lists a domain\'s services.');
    }
    const unnamed = unnamedGenericTargets(call);
    if (unnamed) return toolFailure(unnamed);
    if (call.actsOn !== call.domain && (call.targetDomains.length !== 1 || call.entityIds.length === 0)) {
      return toolFailure(`Call ${call.domain}.${call.service} on one domain's entities at a time (got ${call.targetDomains.join(', ') || 'no entity ids'}).`);
    }
    for (const entityId of call.entityIds) if (!ha.index.get(entityId) && ha.index.size > 0) return unknownEntity(ha, entityId);
    const services = await knownServices(ha, signal);
    if (services instanceof Map) {
      if (!services.get(call.domain)?.[call.service]) {
        const offered = Object.keys(services.get(call.domain) ?? {});
        const hint = offered.length > 0 ? ` ${call.domain} offers: ${offered.slice(0, 20).join(', ')}.` : ` There is no "${call.domain}" domain; action "services" without a domain lists them.`;
        return toolFailure(`Unknown service ${call.domain}.${call.service}.${hint}`);
      }
    } else if (!services.ok && services.reason !== 'refused') {
      return restFailure(services);
    }

    const targets = new Set(call.entityIds);
    const seen = new Map<string, HassEntity>();
    let settled: () => void = () => {};
    const allSeen = new Promise<void>((resolve) => (settled = resolve));
    const stopListening = ha.onStateChanged((entityId, newState) => {
      if (!targets.has(entityId) || newState === null) return;
      seen.set(entityId, newState);
      if (seen.size === targets.size) settled();
    });
    try {
      const result = await ha.rest.callService(call.domain, call.service, call.body, signal);
      if (!result.ok) {
        if (result.reason === 'refused' && result.status === 400) {
          return toolFailure(`Home Assistant refused ${call.domain}.${call.service}: ${result.message}. Check the data against action "services" for domain "${call.domain}".`);
        }
        return restFailure(result);
      }
      const changed = new Map<string, HassEntity>(result.body.map((changedState) => [changedState.entity_id, changedState]));
      if ([...targets].some((entityId) => !changed.has(entityId) && !seen.has(entityId))) {
        await waitFor(allSeen, settleMs, signal);
      }
      for (const [entityId, newState] of seen) if (!changed.has(entityId)) changed.set(entityId, newState);
      return describeCall(ha, call, changed);
    } finally {
      stopListening();
    }
  }

  function describeCall(ha: HomeAssistant, call: ServiceCall, changed: Map<string, HassEntity>): string {
    const lineOf = (entityId: string, newState: HassEntity | undefined) => {
      const entity = ha.index.get(entityId);
      if (!entity) return newState ? `${entityId} ${newState.state}` : `${entityId} (not known)`;
      return entityLine(newState ? ({ ...entity, state: newState } satisfies IndexedEntity) : entity);
    };
    const target = call.entityIds.length > 0 ? ` on ${call.entityIds.join(', ')}` : '';
    const lines = [`Called ${call.domain}.${call.service}${target}.`];
    if (changed.size > 0) lines.push('Changed:', ...[...changed].slice(0, 20).map(([entityId, newState]) => lineOf(entityId, newState)));
    const unchanged = call.entityIds.filter((entityId) => !changed.has(entityId));
    if (unchanged.length > 0) lines.push(`No change seen within ${settleMs / 1000} s for:`, ...unchanged.map((entityId) => lineOf(entityId, undefined)));
    return lines.join('\n');
  }

  async function history(ha: HomeAssistant, entityIds: string[], hours: number | undefined, signal: AbortSignal): Promise<ToolOutput> {
    if (entityIds.length === 0) return toolFailure('Send entity_id (one, or several comma-separated) to summarise its history.');
    for (const entityId of entityIds) if (!ha.index.get(entityId) && ha.index.size > 0) return unknownEntity(ha, entityId);
    const span = Math.min(maxHistoryHours, Math.max(0.1, hours ?? 24));
    const result = await ha.rest.history(entityIds, new Date(Date.now() - span * 3_600_000), signal);
    if (!result.ok) return restFailure(result);
    const byEntity = new Map<string, HassEntity[]>();
    for (const rows of result.body) {
      const entityId = rows[0]?.entity_id;
      if (entityId) byEntity.set(entityId, rows);
    }
    return entityIds.map((entityId) => summariseHistory(entityId, byEntity.get(entityId) ?? [], span)).join('\n');
  }

  function areas(ha: HomeAssistant): ToolOutput {
    const summaries = ha.index.areaSummaries();
    if (summaries.length === 0) return `No areas are defined in Home Assistant (${ha.index.size} entities).${connectionNote(ha)}`;
    const lines = summaries.map(({ areaId, name, entities, domains }) => {
      const kinds = Object.entries(domains).map(([domain, count]) => `${domain} ${count}`).join(', ');
      return `${name} (${areaId}): ${entities} entities${kinds ? ` — ${kinds}` : ''}`;
    });
    return lines.join('\n') + connectionNote(ha);
  }

  async function listServices(ha: HomeAssistant, domain: string | undefined, signal: AbortSignal): Promise<ToolOutput> {
    const services = await knownServices(ha, signal);
    if (!(services instanceof Map)) return restFailure(services as Extract<RestResult<never>, { ok: false }>);
    const wanted = domain?.trim().toLowerCase();
    if (!wanted) return `Domains: ${[...services.keys()].sort().join(', ')}. Send domain to see its services.`;
    const offered = services.get(wanted);
    if (!offered) return toolFailure(`No "${wanted}" domain. Domains: ${[...services.keys()].sort().join(', ')}.`);
    return Object.entries(offered)
      .map(([service, description]) => {
        const fields = Object.keys((description as { fields?: Record<string, unknown> })?.fields ?? {});
        return `${wanted}.${service}${fields.length > 0 ? ` (${fields.slice(0, 12).join(', ')})` : ''}`;
      })
      .join('\n');
  }

  const entityIdsOf = (args: HomeAssistantArguments) => (args.entity_id ?? '').split(/[\s,]+/).filter((id) => id !== '').map((id) => id.toLowerCase());

  return {
    name: 'home_assistant',
    description: 'Home Assistant: find entities by everyday words, read states and history, call services, list areas and services.',
    parameters,
    subject(args) {
      if (args.action === 'call_service') return serviceCallSubject(resolveServiceCall(args));
      return [args.action, args.query ?? args.entity_id ?? args.domain ?? ''].join(' ').trim();
    },
    // Entity, area and attribute names are whatever the household typed: the lists of services are Home Assistant's own.
    untrustedSource: (args) => (args.action === 'services' ? undefined : 'Home Assistant names and attributes'),
    precheck: () => (homeAssistant?.configured ? undefined : notConfigured),
    async execute(args, context) {
      const ha = homeAssistant;
      if (!ha?.configured) return toolFailure(notConfigured);
      const action: Action = args.action;
      if (action !== 'services' && action !== 'call_service' && action !== 'history') {
        const missing = unavailable(ha);
        if (missing) return missing;
      }
      switch (action) {
        case 'search':
          return search(ha, args.query);
        case 'state':
          return state(ha, entityIdsOf(args));
        case 'call_service':
          return callService(ha, resolveServiceCall(args), context.signal);
        case 'history':
          return history(ha, entityIdsOf(args), args.hours, context.signal);
        case 'areas':
          return areas(ha);
        case 'services':
          return listServices(ha, args.domain, context.signal);
        default:
          return toolFailure(`Unknown action "${String(action satisfies never)}"; use one of: ${actions.join(', ')}.`);
      }
    },
  };
}

async function waitFor(done: Promise<void>, timeoutMs: number, signal: AbortSignal): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  let onAbort: () => void = () => {};
  await Promise.race([
    done,
    new Promise<void>((resolve) => {
      timer = setTimeout(resolve, timeoutMs);
      onAbort = resolve;
      signal.addEventListener('abort', onAbort, { once: true });
    }),
  ]);
  clearTimeout(timer);
  signal.removeEventListener('abort', onAbort);
}
