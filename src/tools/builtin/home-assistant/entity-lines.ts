import type { HassEntity } from 'home-assistant-js-websocket';
import type { IndexedEntity } from '../../../integrations/home-assistant/entity-index.ts';

/** The attributes worth a model's attention, by domain; the rest stay out of the line. */
const keyAttributes: Record<string, string[]> = {
  light: ['brightness', 'color_temp_kelvin', 'rgb_color', 'effect'],
  climate: ['current_temperature', 'temperature', 'target_temp_low', 'target_temp_high', 'hvac_action', 'preset_mode', 'fan_mode'],
  cover: ['current_position', 'current_tilt_position'],
  fan: ['percentage', 'preset_mode', 'oscillating'],
  media_player: ['media_title', 'media_artist', 'volume_level', 'source', 'is_volume_muted'],
  humidifier: ['humidity', 'mode'],
  water_heater: ['current_temperature', 'temperature', 'operation_mode'],
  vacuum: ['battery_level', 'status'],
  lock: ['changed_by'],
  alarm_control_panel: ['changed_by'],
  valve: ['current_position'],
};

const stateAttributes = ['unit_of_measurement', 'device_class'];
const valueLength = 60;

function value(raw: unknown): string {
  const text = typeof raw === 'string' ? raw : JSON.stringify(raw);
  return text.length > valueLength ? `${text.slice(0, valueLength)}…` : text;
}

/** `on, brightness 204` or `21.5 °C`: the state with its unit and the attributes that matter. */
export function describeState(state: HassEntity, domain: string): string {
  const unit = state.attributes.unit_of_measurement;
  const parts = [unit ? `${state.state} ${unit}` : state.state];
  for (const name of keyAttributes[domain] ?? []) {
    const attribute = state.attributes[name];
    if (attribute !== undefined && attribute !== null) parts.push(`${name.replaceAll('_', ' ')} ${value(attribute)}`);
  }
  return parts.join(', ');
}

/** One compact line: `light.kitchen "Kitchen ceiling" [Kitchen] on, brightness 204`. */
export function entityLine(entity: IndexedEntity): string {
  const area = entity.areaName ? ` [${entity.areaName}]` : '';
  return `${entity.entityId} "${entity.name}"${area} ${describeState(entity.state, entity.domain)}`;
}

/** The fuller view of `state`: the line, the device, when it last changed, and the other attributes, short. */
export function entityDetails(entity: IndexedEntity): string {
  const lines = [entityLine(entity)];
  if (entity.deviceName) lines.push(`device: ${entity.deviceName}`);
  lines.push(`last changed: ${entity.state.last_changed}`);
  const shown = new Set([...(keyAttributes[entity.domain] ?? []), ...stateAttributes, 'friendly_name']);
  const others = Object.entries(entity.state.attributes).filter(([name, attribute]) => !shown.has(name) && attribute !== null);
  if (others.length > 0) lines.push(`attributes: ${others.slice(0, 20).map(([name, attribute]) => `${name}=${value(attribute)}`).join('; ')}`);
  return lines.join('\n');
}
