import type { HassEntity } from 'home-assistant-js-websocket';
import type { AreaEntry, DeviceEntry, EntityEntry, HouseSnapshot } from './registry-entries.ts';
import { kindWordsOf, wordsOf } from './search-words.ts';

/** An entity as the index keeps it: its latest state, where it is, and its words, made once per change. */
export interface IndexedEntity {
  entityId: string;
  domain: string;
  name: string;
  areaName?: string;
  deviceName?: string;
  state: HassEntity;
  /** Each word of its name, id, device and area, with the weight of the best place it appears. */
  terms: Map<string, number>;
  nameWords: Set<string>;
  namePhrase: string;
  /** Query words naming its kind (`light`, `lamp`, `temperature`…). */
  kinds: string[];
}

export interface SearchHit {
  entity: IndexedEntity;
  score: number;
  /** How many of the query's words this entity matched. */
  matched: number;
}

export interface AreaSummary {
  areaId: string;
  name: string;
  entities: number;
  domains: Record<string, number>;
}

// A word found in the name tells more than the same word in the area the entity sits in.
const weights = { name: 3, kind: 3.5, id: 2.5, device: 2, area: 1.5, kindAndName: 0.5, wholeName: 1 } as const;
const prefixShare = 0.6;

/** What decides an entity's words besides its id; when none of it changes, a new state only replaces the old. */
function wordingOf(state: HassEntity): string {
  const { friendly_name: name, device_class: deviceClass, unit_of_measurement: unit } = state.attributes;
  return `${name ?? ''}\u0000${deviceClass ?? ''}\u0000${unit ?? ''}`;
}

function addTo<Key>(postings: Map<Key, Set<IndexedEntity>>, key: Key, entity: IndexedEntity): void {
  let entities = postings.get(key);
  if (!entities) postings.set(key, (entities = new Set()));
  entities.add(entity);
}

function removeFrom<Key>(postings: Map<Key, Set<IndexedEntity>>, key: Key, entity: IndexedEntity): void {
  const entities = postings.get(key);
  entities?.delete(entity);
  if (entities?.size === 0) postings.delete(key);
}

/**
 * Home Assistant's entities in memory, searchable by everyday words. Built from the registries
 * and states at connect and kept current by `state_changed`; no lookup makes a request. Words
 * are posted once per entity, so a search reads only the entities holding its words.
 */
export class EntityIndex {
  private readonly entities = new Map<string, IndexedEntity>();
  private readonly postings = new Map<string, Set<IndexedEntity>>();
  private readonly kindPostings = new Map<string, Set<IndexedEntity>>();
  private areas = new Map<string, AreaEntry>();
  private devices = new Map<string, DeviceEntry>();
  private registry = new Map<string, EntityEntry>();

  get size(): number {
    return this.entities.size;
  }

  get areaCount(): number {
    return this.areas.size;
  }

  /**
   * Takes a fresh snapshot. A state newer than the snapshot's (an event that overtook the
   * answer to get_states) is kept.
   */
  load(snapshot: HouseSnapshot): void {
    this.areas = new Map(snapshot.areas.map((area) => [area.area_id, area]));
    this.devices = new Map(snapshot.devices.map((device) => [device.id, device]));
    this.registry = new Map(snapshot.entities.map((entry) => [entry.entity_id, entry]));
    const previous = new Map([...this.entities].map(([entityId, entity]) => [entityId, entity.state]));
    this.entities.clear();
    this.postings.clear();
    this.kindPostings.clear();
    for (const state of snapshot.states) {
      if (this.registry.get(state.entity_id)?.disabled_by) continue;
      const known = previous.get(state.entity_id);
      this.add(known && known.last_updated > state.last_updated ? known : state);
    }
  }

  /** Applies one `state_changed` event; a null new state means the entity was removed. */
  update(entityId: string, state: HassEntity | null): void {
    const current = this.entities.get(entityId);
    if (current && state && wordingOf(current.state) === wordingOf(state)) {
      current.state = state;
      return;
    }
    if (current) this.remove(current);
    if (state) this.add(state);
  }

  get(entityId: string): IndexedEntity | undefined {
    return this.entities.get(entityId);
  }

  /** Entities ranked for the query: every word matched before some, then by how well (name over area). */
  search(query: string, limit = 10): SearchHit[] {
    const words = [...new Set(wordsOf(query))];
    const totals = new Map<IndexedEntity, SearchHit>();
    for (const word of words) {
      const best = new Map<IndexedEntity, number>();
      const consider = (entity: IndexedEntity, score: number) => {
        if (score > (best.get(entity) ?? 0)) best.set(entity, score);
      };
      for (const entity of this.postings.get(word) ?? []) consider(entity, entity.terms.get(word)!);
      if (word.length >= 3) {
        for (const [term, entities] of this.postings) {
          if (term.length <= word.length || !term.startsWith(word)) continue;
          for (const entity of entities) consider(entity, entity.terms.get(term)! * prefixShare);
        }
      }
      for (const entity of this.kindPostings.get(word) ?? []) consider(entity, weights.kind + (entity.nameWords.has(word) ? weights.kindAndName : 0));
      for (const [entity, score] of best) {
        const hit = totals.get(entity);
        if (hit) {
          hit.score += score;
          hit.matched++;
        } else totals.set(entity, { entity, score, matched: 1 });
      }
    }
    const phrase = words.join(' ');
    const hits = [...totals.values()];
    for (const hit of hits) if (hit.entity.namePhrase === phrase) hit.score += weights.wholeName;
    hits.sort((left, right) => right.matched - left.matched || right.score - left.score || left.entity.entityId.localeCompare(right.entity.entityId));
    return hits.slice(0, limit);
  }

  /** Every area with how many entities it holds, by domain; entities without an area are left out. */
  areaSummaries(): AreaSummary[] {
    const summaries = new Map<string, AreaSummary>();
    for (const area of this.areas.values()) summaries.set(area.area_id, { areaId: area.area_id, name: area.name, entities: 0, domains: {} });
    for (const entity of this.entities.values()) {
      const areaId = this.areaIdOf(entity.entityId);
      const summary = areaId === undefined ? undefined : summaries.get(areaId);
      if (!summary) continue;
      summary.entities++;
      summary.domains[entity.domain] = (summary.domains[entity.domain] ?? 0) + 1;
    }
    return [...summaries.values()].sort((left, right) => left.name.localeCompare(right.name));
  }

  private areaIdOf(entityId: string): string | undefined {
    const entry = this.registry.get(entityId);
    const device = entry?.device_id ? this.devices.get(entry.device_id) : undefined;
    return entry?.area_id ?? device?.area_id ?? undefined;
  }

  private add(state: HassEntity): void {
    const entity = this.indexed(state);
    this.entities.set(entity.entityId, entity);
    for (const word of entity.terms.keys()) addTo(this.postings, word, entity);
    for (const word of entity.kinds) addTo(this.kindPostings, word, entity);
  }

  private remove(entity: IndexedEntity): void {
    this.entities.delete(entity.entityId);
    for (const word of entity.terms.keys()) removeFrom(this.postings, word, entity);
    for (const word of entity.kinds) removeFrom(this.kindPostings, word, entity);
  }

  private indexed(state: HassEntity): IndexedEntity {
    const entityId = state.entity_id;
    const entry = this.registry.get(entityId);
    const device = entry?.device_id ? this.devices.get(entry.device_id) : undefined;
    const areaId = this.areaIdOf(entityId);
    const area = areaId === undefined ? undefined : this.areas.get(areaId);
    const name = String(state.attributes.friendly_name ?? entry?.name ?? entry?.original_name ?? entityId);
    const deviceName = device ? (device.name_by_user ?? device.name ?? undefined) : undefined;
    const dot = entityId.indexOf('.');
    const domain = entityId.slice(0, dot);
    const nameWords = wordsOf([name, ...(entry?.aliases ?? [])].join(' '));
    const terms = new Map<string, number>();
    const post = (words: readonly string[], weight: number) => {
      for (const word of words) if (weight > (terms.get(word) ?? 0)) terms.set(word, weight);
    };
    post(nameWords, weights.name);
    post(wordsOf(entityId.slice(dot + 1)), weights.id);
    if (deviceName) post(wordsOf(deviceName), weights.device);
    if (area) post(wordsOf([area.name, ...(area.aliases ?? [])].join(' ')), weights.area);
    return {
      entityId,
      domain,
      name,
      ...(area && { areaName: area.name }),
      ...(deviceName && { deviceName }),
      state,
      terms,
      nameWords: new Set(nameWords),
      namePhrase: wordsOf(name).join(' '),
      kinds: kindWordsOf(state, domain),
    };
  }
}
