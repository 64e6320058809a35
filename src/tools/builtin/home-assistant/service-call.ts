/** What `call_service` will call, derived one way for both the approval subject and the call itself. */
export interface ServiceCall {
  domain: string;
  service: string;
  entityIds: string[];
  /** The body sent to HA: the model's data with the entity ids as one list. */
  body: Record<string, unknown>;
  /** The domain the call acts on: the targets' own for HA's generic `homeassistant.*` services. */
  actsOn: string;
  /** Domains of the targets when a generic service spans several (the call is then refused). */
  targetDomains: string[];
}

export interface ServiceCallArguments {
  domain?: string;
  service?: string;
  entity_id?: string;
  data?: Record<string, unknown>;
}

const genericDomain = 'homeassistant';

function idsOf(raw: unknown): string[] {
  if (typeof raw === 'string') return raw.split(/[\s,]+/).filter((id) => id !== '');
  if (Array.isArray(raw)) return raw.flatMap(idsOf);
  return [];
}

export function resolveServiceCall(args: ServiceCallArguments): ServiceCall {
  const { entity_id: dataIds, ...data } = args.data ?? {};
  const entityIds = [...new Set([...idsOf(args.entity_id), ...idsOf(dataIds)].map((id) => id.toLowerCase()))];
  let domain = (args.domain ?? '').trim().toLowerCase();
  let service = (args.service ?? '').trim().toLowerCase();
  const dot = service.indexOf('.');
  if (dot > 0 && (domain === '' || domain === service.slice(0, dot))) {
    domain = service.slice(0, dot);
    service = service.slice(dot + 1);
  }
  if (domain === '' && entityIds[0]?.includes('.')) domain = entityIds[0].split('.')[0]!;
  const targetDomains = [...new Set(entityIds.map((id) => id.split('.')[0]!))];
  const actsOn = domain === genericDomain && targetDomains.length >= 1 ? targetDomains[0]! : domain;
  return { domain, service, entityIds, body: entityIds.length > 0 ? { ...data, entity_id: entityIds } : data, actsOn, targetDomains };
}

/** `lock.unlock lock.front_door`: the domain acted on leads, so rules like `home_assistant(lock.*)` match. */
export function serviceCallSubject(call: ServiceCall): string {
  const via = call.actsOn !== call.domain ? ` (via ${call.domain}.${call.service})` : '';
  const areas = ['area_id', 'device_id'].flatMap((key) => idsOf(call.body[key]).map((id) => `${key.replace('_id', '')}:${id}`));
  return [`${call.actsOn || 'unknown'}.${call.service || 'unknown'}`, ...call.entityIds, ...areas].join(' ') + via;
}
