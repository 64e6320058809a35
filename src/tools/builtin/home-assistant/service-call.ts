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
/** Targets that name a room, floor, device or label instead of entities. */
const groupTargets = ['area_id', 'device_id', 'floor_id', 'label_id', 'target'];

/**
 * Why a call of HA's generic `homeassistant.*` services is refused, if it is: one that does not
 * name its entities (a room, a device, `all`) could reach a lock or a garage door while its
 * approval subject names no domain, so no rule would ask the person first.
 */
export function unnamedGenericTargets(call: ServiceCall): string | undefined {
  if (call.domain !== genericDomain) return undefined;
  const groups = groupTargets.filter((key) => call.body[key] !== undefined);
  if (call.entityIds.length > 0 && !call.entityIds.includes('all') && groups.length === 0) return undefined;
  const named = groups.length > 0 ? groups.join(', ') : call.entityIds.length > 0 ? 'entity_id "all"' : 'no entity_id';
  return (
    `${genericDomain}.${call.service || 'unknown'} with ${named} is refused: name the entities with entity_id, ` +
    `or call their own domain's service (e.g. light.turn_on with area_id), so the approval rules can see what it reaches.`
  );
}

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
