import { seededRandom } from './seeded-random.ts';

/**
 * The small house the Home Assistant stand-in serves: areas, devices, entities with their
 * current states, and a plausible past for the last 24 hours. Everything is derived from a
 * seeded random source, so every run of a test sees the same house.
 */

export type Attributes = Record<string, unknown>;

export interface Area {
  area_id: string;
  name: string;
}

export interface Device {
  id: string;
  name: string;
  manufacturer: string;
  model: string;
  area_id: string | null;
}

export interface Entity {
  entity_id: string;
  /** The registry's own `area_id`, set only when it differs from its device's area. */
  area_id: string | null;
  device_id: string | null;
  platform: string;
  state: string;
  attributes: Attributes;
}

/** One state an entity had, from `changed` (its `last_changed`) until the next one. */
export interface PastState {
  state: string;
  attributes: Attributes;
  changed: number;
}

export interface House {
  areas: Area[];
  devices: Device[];
  entities: Entity[];
  /** Oldest first; the last one is each entity's current state. */
  history: Map<string, PastState[]>;
}

function hexId(random: () => number): string {
  let id = '';
  while (id.length < 32) id += Math.floor(random() * 16).toString(16);
  return id;
}

const areas: Area[] = [
  { area_id: 'kitchen', name: 'Kitchen' },
  { area_id: 'living_room', name: 'Living Room' },
  { area_id: 'bedroom', name: 'Bedroom' },
  { area_id: 'bathroom', name: 'Bathroom' },
  { area_id: 'garage', name: 'Garage' },
  { area_id: 'hallway', name: 'Hallway' },
  { area_id: 'office', name: 'Office' },
];

interface DeviceSpec {
  key: string;
  name: string;
  manufacturer: string;
  model: string;
  area_id: string | null;
}

const deviceSpecs: DeviceSpec[] = [
  { key: 'kitchen_ceiling', name: 'Kitchen ceiling', manufacturer: 'Signify Netherlands B.V.', model: 'Hue White and Color Ambiance A19', area_id: 'kitchen' },
  { key: 'kitchen_cabinet', name: 'Kitchen under-cabinet strip', manufacturer: 'Signify Netherlands B.V.', model: 'Hue Lightstrip Plus', area_id: 'kitchen' },
  { key: 'coffee_plug', name: 'Coffee maker plug', manufacturer: 'Shelly', model: 'Shelly Plug S', area_id: 'kitchen' },
  { key: 'kitchen_climate', name: 'Kitchen climate sensor', manufacturer: 'Aqara', model: 'Temperature and Humidity Sensor T1', area_id: 'kitchen' },
  { key: 'kitchen_window', name: 'Kitchen window sensor', manufacturer: 'Aqara', model: 'Door and Window Sensor P2', area_id: 'kitchen' },
  { key: 'floor_lamp', name: 'Living room floor lamp', manufacturer: 'IKEA of Sweden', model: 'TRADFRI bulb E27 WS opal 1000lm', area_id: 'living_room' },
  { key: 'tv_backlight', name: 'TV backlight', manufacturer: 'Signify Netherlands B.V.', model: 'Hue Play gradient lightstrip', area_id: 'living_room' },
  { key: 'tv', name: 'Living room TV', manufacturer: 'LG Electronics', model: 'OLED55C3', area_id: 'living_room' },
  { key: 'thermostat', name: 'Living room thermostat', manufacturer: 'ecobee', model: 'ecobee3 lite', area_id: 'living_room' },
  { key: 'ceiling_fan', name: 'Living room ceiling fan', manufacturer: 'Hunter Fan', model: 'SIMPLEconnect', area_id: 'living_room' },
  { key: 'spare_plug', name: 'Smart plug 3', manufacturer: 'TP-Link', model: 'Tapo P110', area_id: null },
  { key: 'bedroom_ceiling', name: 'Bedroom ceiling', manufacturer: 'IKEA of Sweden', model: 'TRADFRI bulb GU10 WS 400lm', area_id: 'bedroom' },
  { key: 'bedside_lamp', name: 'Bedside lamp', manufacturer: 'Signify Netherlands B.V.', model: 'Hue Go', area_id: 'bedroom' },
  { key: 'bedroom_climate', name: 'Bedroom climate sensor', manufacturer: 'Aqara', model: 'Temperature and Humidity Sensor T1', area_id: 'bedroom' },
  { key: 'bedroom_window', name: 'Bedroom window sensor', manufacturer: 'Aqara', model: 'Door and Window Sensor P2', area_id: 'bedroom' },
  { key: 'blanket_plug', name: 'Electric blanket plug', manufacturer: 'Shelly', model: 'Shelly Plug S', area_id: 'bedroom' },
  { key: 'mirror_light', name: 'Bathroom mirror light', manufacturer: 'Shelly', model: 'Shelly Dimmer 2', area_id: 'bathroom' },
  { key: 'extractor', name: 'Bathroom extractor fan', manufacturer: 'Shelly', model: 'Shelly 1PM', area_id: 'bathroom' },
  { key: 'bathroom_climate', name: 'Bathroom climate sensor', manufacturer: 'Aqara', model: 'Temperature and Humidity Sensor T1', area_id: 'bathroom' },
  { key: 'garage_opener', name: 'Garage door opener', manufacturer: 'Chamberlain', model: 'myQ Smart Garage Hub', area_id: 'garage' },
  { key: 'garage_light', name: 'Garage light', manufacturer: 'Shelly', model: 'Shelly 1', area_id: 'garage' },
  { key: 'ev_charger', name: 'EV charger', manufacturer: 'Wallbox', model: 'Pulsar Plus', area_id: 'garage' },
  { key: 'garage_side_door', name: 'Garage side door sensor', manufacturer: 'Aqara', model: 'Door and Window Sensor P2', area_id: 'garage' },
  { key: 'front_door_lock', name: 'Front door lock', manufacturer: 'Nuki', model: 'Smart Lock 4.0', area_id: 'hallway' },
  { key: 'front_door_contact', name: 'Front door sensor', manufacturer: 'Aqara', model: 'Door and Window Sensor P2', area_id: 'hallway' },
  { key: 'hallway_light', name: 'Hallway light', manufacturer: 'IKEA of Sweden', model: 'TRADFRI bulb E27 W opal 1000lm', area_id: 'hallway' },
  { key: 'hallway_motion', name: 'Hallway motion sensor', manufacturer: 'Philips', model: 'Hue motion sensor', area_id: 'hallway' },
  { key: 'desk_lamp', name: 'Office desk lamp', manufacturer: 'Signify Netherlands B.V.', model: 'Hue White Ambiance E27', area_id: 'office' },
  { key: 'office_monitor_plug', name: 'Office monitor plug', manufacturer: 'TP-Link', model: 'Tapo P110', area_id: 'office' },
  { key: 'office_air', name: 'Office air monitor', manufacturer: 'Airthings', model: 'View Plus', area_id: 'office' },
  { key: 'energy_meter', name: 'Energy meter', manufacturer: 'Shelly', model: 'Shelly Pro 3EM', area_id: null },
  { key: 'weather_station', name: 'Garden weather station', manufacturer: 'Netatmo', model: 'Outdoor module', area_id: null },
];

const colorLight = { supported_color_modes: ['color_temp', 'hs'], min_color_temp_kelvin: 2000, max_color_temp_kelvin: 6535, supported_features: 40 };
const whiteLight = { supported_color_modes: ['color_temp'], min_color_temp_kelvin: 2200, max_color_temp_kelvin: 4000, supported_features: 40 };
const dimmableLight = { supported_color_modes: ['brightness'], supported_features: 32 };
const onOffLight = { supported_color_modes: ['onoff'], supported_features: 0 };

export const lightOffAttributes = { color_mode: null, brightness: null, color_temp_kelvin: null, hs_color: null, rgb_color: null, xy_color: null };

const temperature = { state_class: 'measurement', unit_of_measurement: '°C', device_class: 'temperature' };
const humidity = { state_class: 'measurement', unit_of_measurement: '%', device_class: 'humidity' };
const power = { state_class: 'measurement', unit_of_measurement: 'W', device_class: 'power' };

interface EntitySpec {
  entity_id: string;
  device: string | null;
  area_id?: string;
  platform: string;
  state: string;
  attributes: Attributes;
}

const entitySpecs: EntitySpec[] = [
  { entity_id: 'light.kitchen_ceiling', device: 'kitchen_ceiling', platform: 'hue', state: 'on', attributes: { ...colorLight, color_mode: 'color_temp', brightness: 204, color_temp_kelvin: 2700, hs_color: [28.0, 63.9], rgb_color: [255, 167, 89], xy_color: [0.524, 0.387], friendly_name: 'Kitchen ceiling' } },
  { entity_id: 'light.kitchen_under_cabinet', device: 'kitchen_cabinet', platform: 'hue', state: 'off', attributes: { ...colorLight, ...lightOffAttributes, friendly_name: 'Kitchen under-cabinet' } },
  { entity_id: 'switch.coffee_maker', device: 'coffee_plug', platform: 'shelly', state: 'off', attributes: { device_class: 'outlet', friendly_name: 'Coffee maker' } },
  { entity_id: 'sensor.coffee_maker_power', device: 'coffee_plug', platform: 'shelly', state: '0.0', attributes: { ...power, friendly_name: 'Coffee maker power' } },
  { entity_id: 'sensor.kitchen_temperature', device: 'kitchen_climate', platform: 'zha', state: '21.4', attributes: { ...temperature, friendly_name: 'Kitchen temperature' } },
  { entity_id: 'sensor.kitchen_humidity', device: 'kitchen_climate', platform: 'zha', state: '48', attributes: { ...humidity, friendly_name: 'Kitchen humidity' } },
  { entity_id: 'binary_sensor.kitchen_window', device: 'kitchen_window', platform: 'zha', state: 'off', attributes: { device_class: 'window', friendly_name: 'Kitchen window' } },
  { entity_id: 'light.living_room_floor_lamp', device: 'floor_lamp', platform: 'zha', state: 'on', attributes: { ...whiteLight, color_mode: 'color_temp', brightness: 153, color_temp_kelvin: 2700, hs_color: [28.0, 63.9], rgb_color: [255, 167, 89], xy_color: [0.524, 0.387], friendly_name: 'Living room floor lamp' } },
  { entity_id: 'light.tv_backlight', device: 'tv_backlight', platform: 'hue', state: 'off', attributes: { ...colorLight, ...lightOffAttributes, friendly_name: 'TV backlight' } },
  { entity_id: 'media_player.living_room_tv', device: 'tv', platform: 'webostv', state: 'off', attributes: { device_class: 'tv', source_list: ['HDMI 1', 'HDMI 2', 'Live TV', 'Netflix', 'YouTube'], supported_features: 24509, friendly_name: 'Living room TV' } },
  { entity_id: 'climate.living_room_thermostat', device: 'thermostat', platform: 'ecobee', state: 'heat', attributes: { hvac_modes: ['off', 'heat', 'cool', 'heat_cool'], min_temp: 7, max_temp: 35, target_temp_step: 0.5, current_temperature: 20.5, temperature: 21, current_humidity: 45, hvac_action: 'heating', preset_modes: ['home', 'away', 'sleep'], preset_mode: 'home', friendly_name: 'Living room thermostat', supported_features: 403 } },
  { entity_id: 'fan.living_room_ceiling_fan', device: 'ceiling_fan', platform: 'hunterdouglas', state: 'off', attributes: { percentage: 0, percentage_step: 33.333333333333336, preset_mode: null, preset_modes: null, friendly_name: 'Living room ceiling fan', supported_features: 49 } },
  { entity_id: 'sensor.living_room_temperature', device: 'thermostat', platform: 'ecobee', state: '20.5', attributes: { ...temperature, friendly_name: 'Living room temperature' } },
  { entity_id: 'sensor.living_room_humidity', device: 'thermostat', platform: 'ecobee', state: '45', attributes: { ...humidity, friendly_name: 'Living room humidity' } },
  { entity_id: 'switch.christmas_lights', device: 'spare_plug', area_id: 'living_room', platform: 'tplink', state: 'off', attributes: { device_class: 'outlet', friendly_name: 'Christmas lights' } },
  { entity_id: 'light.bedroom_ceiling', device: 'bedroom_ceiling', platform: 'zha', state: 'off', attributes: { ...whiteLight, ...lightOffAttributes, friendly_name: 'Bedroom ceiling' } },
  { entity_id: 'light.bedside_lamp', device: 'bedside_lamp', platform: 'hue', state: 'off', attributes: { ...colorLight, ...lightOffAttributes, friendly_name: 'Bedside lamp' } },
  { entity_id: 'sensor.bedroom_temperature', device: 'bedroom_climate', platform: 'zha', state: '19.2', attributes: { ...temperature, friendly_name: 'Bedroom temperature' } },
  { entity_id: 'sensor.bedroom_humidity', device: 'bedroom_climate', platform: 'zha', state: '51', attributes: { ...humidity, friendly_name: 'Bedroom humidity' } },
  { entity_id: 'binary_sensor.bedroom_window', device: 'bedroom_window', platform: 'zha', state: 'on', attributes: { device_class: 'window', friendly_name: 'Bedroom window' } },
  { entity_id: 'switch.electric_blanket', device: 'blanket_plug', platform: 'shelly', state: 'off', attributes: { device_class: 'outlet', friendly_name: 'Electric blanket' } },
  { entity_id: 'light.bathroom_mirror', device: 'mirror_light', platform: 'shelly', state: 'off', attributes: { ...dimmableLight, ...lightOffAttributes, friendly_name: 'Bathroom mirror light' } },
  { entity_id: 'fan.bathroom_extractor', device: 'extractor', platform: 'shelly', state: 'off', attributes: { supported_features: 48, friendly_name: 'Bathroom extractor fan' } },
  { entity_id: 'sensor.bathroom_temperature', device: 'bathroom_climate', platform: 'zha', state: '22.1', attributes: { ...temperature, friendly_name: 'Bathroom temperature' } },
  { entity_id: 'sensor.bathroom_humidity', device: 'bathroom_climate', platform: 'zha', state: '63', attributes: { ...humidity, friendly_name: 'Bathroom humidity' } },
  { entity_id: 'cover.garage_door', device: 'garage_opener', platform: 'myq', state: 'closed', attributes: { device_class: 'garage', current_position: 0, supported_features: 11, friendly_name: 'Garage door' } },
  { entity_id: 'light.garage', device: 'garage_light', platform: 'shelly', state: 'off', attributes: { ...onOffLight, ...lightOffAttributes, friendly_name: 'Garage light' } },
  { entity_id: 'switch.ev_charger', device: 'ev_charger', platform: 'wallbox', state: 'on', attributes: { friendly_name: 'EV charger' } },
  { entity_id: 'sensor.ev_charger_power', device: 'ev_charger', platform: 'wallbox', state: '7360', attributes: { ...power, friendly_name: 'EV charger power' } },
  { entity_id: 'binary_sensor.garage_side_door', device: 'garage_side_door', platform: 'zha', state: 'off', attributes: { device_class: 'door', friendly_name: 'Garage side door' } },
  { entity_id: 'lock.front_door', device: 'front_door_lock', platform: 'nuki', state: 'locked', attributes: { supported_features: 1, friendly_name: 'Front door' } },
  { entity_id: 'binary_sensor.front_door', device: 'front_door_contact', platform: 'zha', state: 'off', attributes: { device_class: 'door', friendly_name: 'Front door contact' } },
  { entity_id: 'light.hallway', device: 'hallway_light', platform: 'zha', state: 'off', attributes: { ...dimmableLight, ...lightOffAttributes, friendly_name: 'Hallway light' } },
  { entity_id: 'binary_sensor.hallway_motion', device: 'hallway_motion', platform: 'hue', state: 'off', attributes: { device_class: 'motion', friendly_name: 'Hallway motion' } },
  { entity_id: 'light.office_desk_lamp', device: 'desk_lamp', platform: 'hue', state: 'on', attributes: { ...whiteLight, min_color_temp_kelvin: 2200, max_color_temp_kelvin: 6535, color_mode: 'color_temp', brightness: 255, color_temp_kelvin: 4000, hs_color: [26.8, 34.8], rgb_color: [255, 206, 166], xy_color: [0.42, 0.365], friendly_name: 'Office desk lamp' } },
  { entity_id: 'switch.office_monitor', device: 'office_monitor_plug', platform: 'tplink', state: 'on', attributes: { device_class: 'outlet', friendly_name: 'Office monitor' } },
  { entity_id: 'sensor.office_temperature', device: 'office_air', platform: 'airthings', state: '21.9', attributes: { ...temperature, friendly_name: 'Office temperature' } },
  { entity_id: 'sensor.office_co2', device: 'office_air', platform: 'airthings', state: '712', attributes: { state_class: 'measurement', unit_of_measurement: 'ppm', device_class: 'carbon_dioxide', friendly_name: 'Office CO2' } },
  { entity_id: 'sensor.house_power', device: 'energy_meter', platform: 'shelly', state: '8412', attributes: { ...power, friendly_name: 'House power' } },
  { entity_id: 'sensor.outdoor_temperature', device: 'weather_station', platform: 'netatmo', state: '8.3', attributes: { ...temperature, friendly_name: 'Outdoor temperature' } },
];

const dayMs = 24 * 60 * 60 * 1000;

/** Past states for one entity over the last day, ending with its current state. */
function pastOf(spec: EntitySpec, now: number, random: () => number): PastState[] {
  const domain = spec.entity_id.split('.')[0]!;
  const past: PastState[] = [];
  const start = now - dayMs;
  if (domain === 'sensor') {
    const current = Number(spec.state);
    const decimals = spec.state.includes('.') ? 1 : 0;
    const swing = Math.max(Math.abs(current) * 0.08, 0.6);
    for (let hour = 24; hour >= 1; hour--) {
      const changed = now - hour * 3_600_000 + Math.floor(random() * 600_000);
      const value = (current + Math.sin((hour / 24) * 2 * Math.PI) * swing + (random() - 0.5) * swing * 0.3).toFixed(decimals);
      if (past.at(-1)?.state !== value) past.push({ state: value, attributes: spec.attributes, changed });
    }
  } else {
    const alternative = alternativeState(spec);
    const switches = 2 + Math.floor(random() * 4);
    let changed = start + Math.floor(random() * 3_600_000);
    for (let index = 0; index < switches; index++) {
      const asNow = (switches - index) % 2 === 0;
      past.push({ state: asNow ? spec.state : alternative.state, attributes: asNow ? spec.attributes : alternative.attributes, changed });
      changed += Math.floor(((now - changed) / (switches - index + 1)) * (0.5 + random() * 0.5));
    }
  }
  const last = past.at(-1);
  if (last?.state === spec.state && last.attributes === spec.attributes) past.pop();
  const previous = past.at(-1)?.changed ?? start;
  const lastChanged = Math.max(previous + 1_000, Math.min(now - 60_000, previous + 60_000 + Math.floor(random() * 1_800_000)));
  past.push({ state: spec.state, attributes: spec.attributes, changed: lastChanged });
  return past;
}

function alternativeState(spec: EntitySpec): { state: string; attributes: Attributes } {
  const domain = spec.entity_id.split('.')[0]!;
  const on = spec.state === 'on';
  switch (domain) {
    case 'light':
      return on
        ? { state: 'off', attributes: { ...spec.attributes, ...lightOffAttributes } }
        : { state: 'on', attributes: { ...spec.attributes, color_mode: (spec.attributes.supported_color_modes as string[])[0], brightness: 180 } };
    case 'lock':
      return { state: spec.state === 'locked' ? 'unlocked' : 'locked', attributes: spec.attributes };
    case 'cover':
      return spec.state === 'closed'
        ? { state: 'open', attributes: { ...spec.attributes, current_position: 100 } }
        : { state: 'closed', attributes: { ...spec.attributes, current_position: 0 } };
    case 'climate':
      return { state: spec.state, attributes: { ...spec.attributes, temperature: 18, hvac_action: 'idle' } };
    case 'media_player':
      return spec.state === 'off' ? { state: 'playing', attributes: { ...spec.attributes, source: 'Netflix', volume_level: 0.25 } } : { state: 'off', attributes: spec.attributes };
    case 'fan':
      return on ? { state: 'off', attributes: { ...spec.attributes, percentage: 0 } } : { state: 'on', attributes: { ...spec.attributes, percentage: 67 } };
    default:
      return { state: on ? 'off' : 'on', attributes: spec.attributes };
  }
}

const extraKinds = [
  { domain: 'light', label: 'light', attributes: (name: string) => ({ ...dimmableLight, ...lightOffAttributes, friendly_name: name }), state: 'off' },
  { domain: 'switch', label: 'plug', attributes: (name: string) => ({ device_class: 'outlet', friendly_name: name }), state: 'on' },
  { domain: 'sensor', label: 'temperature', attributes: (name: string) => ({ ...temperature, friendly_name: name }), state: '20.0' },
  { domain: 'sensor', label: 'humidity', attributes: (name: string) => ({ ...humidity, friendly_name: name }), state: '50' },
  { domain: 'binary_sensor', label: 'motion', attributes: (name: string) => ({ device_class: 'motion', friendly_name: name }), state: 'off' },
];

/** Builds the house, plus `extraEntities` generated ones spread over the areas (for benchmarks). */
export function buildHouse(now: number, extraEntities = 0, seed = 16): House {
  const random = seededRandom(seed);
  const deviceIds = new Map<string, string>();
  const devices: Device[] = deviceSpecs.map((spec) => {
    const id = hexId(random);
    deviceIds.set(spec.key, id);
    return { id, name: spec.name, manufacturer: spec.manufacturer, model: spec.model, area_id: spec.area_id };
  });
  const entities: Entity[] = [];
  const history = new Map<string, PastState[]>();
  for (const spec of entitySpecs) {
    const past = pastOf(spec, now, random);
    history.set(spec.entity_id, past);
    entities.push({
      entity_id: spec.entity_id,
      area_id: spec.area_id ?? null,
      device_id: spec.device === null ? null : deviceIds.get(spec.device)!,
      platform: spec.platform,
      state: spec.state,
      attributes: spec.attributes,
    });
  }
  for (let index = 0; index < extraEntities; index++) {
    const area = areas[index % areas.length]!;
    const kind = extraKinds[Math.floor(index / areas.length) % extraKinds.length]!;
    const number = Math.floor(index / (areas.length * extraKinds.length)) + 1;
    const name = `${area.name} ${kind.label} ${number}`;
    const entityId = `${kind.domain}.${area.area_id}_${kind.label}_${number}`;
    const device: Device = { id: hexId(random), name, manufacturer: 'Generic', model: `${kind.label} ${number}`, area_id: area.area_id };
    devices.push(device);
    entities.push({ entity_id: entityId, area_id: null, device_id: device.id, platform: 'demo', state: kind.state, attributes: kind.attributes(name) });
    history.set(entityId, [{ state: kind.state, attributes: kind.attributes(name), changed: now - Math.floor(random() * dayMs) }]);
  }
  return { areas, devices, entities, history };
}
