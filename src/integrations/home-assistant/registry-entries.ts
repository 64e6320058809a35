import type { HassEntity } from 'home-assistant-js-websocket';

/** One row of `config/area_registry/list`. */
export interface AreaEntry {
  area_id: string;
  name: string;
  aliases?: string[];
}

/** One row of `config/device_registry/list`. */
export interface DeviceEntry {
  id: string;
  name: string | null;
  name_by_user?: string | null;
  area_id?: string | null;
}

/** One row of `config/entity_registry/list`. */
export interface EntityEntry {
  entity_id: string;
  name?: string | null;
  original_name?: string | null;
  area_id?: string | null;
  device_id?: string | null;
  disabled_by?: string | null;
  aliases?: string[];
}

/** Everything Home Assistant told Hearth at connect. */
export interface HouseSnapshot {
  areas: AreaEntry[];
  devices: DeviceEntry[];
  entities: EntityEntry[];
  states: HassEntity[];
}
