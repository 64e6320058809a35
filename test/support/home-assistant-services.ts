/**
 * The services the Home Assistant stand-in knows, with the effect each has on an entity's
 * state, and their descriptions as `get_services` lists them.
 */
import { lightOffAttributes, type Attributes } from './home-assistant-house.ts';

export interface EntityState {
  state: string;
  attributes: Attributes;
}

/** A service call HA refuses as invalid; its code and message are what HA answers. */
export class ServiceError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

type Effect = (current: EntityState, data: Attributes) => EntityState;

interface Field {
  description: string;
  example?: unknown;
}

interface Service {
  description: string;
  fields?: Record<string, Field>;
  effect: Effect;
}

function hsFromRgb([red, green, blue]: number[]): [number, number] {
  const [r, g, b] = [red! / 255, green! / 255, blue! / 255];
  const max = Math.max(r, g, b);
  const delta = max - Math.min(r, g, b);
  let hue = 0;
  if (delta > 0) {
    if (max === r) hue = 60 * (((g - b) / delta) % 6);
    else if (max === g) hue = 60 * ((b - r) / delta + 2);
    else hue = 60 * ((r - g) / delta + 4);
  }
  if (hue < 0) hue += 360;
  return [Number(hue.toFixed(3)), Number((max === 0 ? 0 : (delta / max) * 100).toFixed(3))];
}

function rgbFromHs([hue, saturation]: number[]): [number, number, number] {
  const chroma = saturation! / 100;
  const section = hue! / 60;
  const second = chroma * (1 - Math.abs((section % 2) - 1));
  const [r, g, b] =
    section < 1 ? [chroma, second, 0] : section < 2 ? [second, chroma, 0] : section < 3 ? [0, chroma, second] : section < 4 ? [0, second, chroma] : section < 5 ? [second, 0, chroma] : [chroma, 0, second];
  const lift = 1 - chroma;
  return [Math.round((r + lift) * 255), Math.round((g + lift) * 255), Math.round((b + lift) * 255)];
}

function rgbFromKelvin(kelvin: number): [number, number, number] {
  const temperature = kelvin / 100;
  const red = temperature <= 66 ? 255 : 329.698727446 * (temperature - 60) ** -0.1332047592;
  const green = temperature <= 66 ? 99.4708025861 * Math.log(temperature) - 161.1195681661 : 288.1221695283 * (temperature - 60) ** -0.0755148492;
  const blue = temperature >= 66 ? 255 : temperature <= 19 ? 0 : 138.5177312231 * Math.log(temperature - 10) - 305.0447927307;
  const clamp = (value: number) => Math.round(Math.min(255, Math.max(0, value)));
  return [clamp(red), clamp(green), clamp(blue)];
}

function xyFromRgb(rgb: number[]): [number, number] {
  const linear = rgb.map((channel) => {
    const value = channel / 255;
    return value > 0.04045 ? ((value + 0.055) / 1.055) ** 2.4 : value / 12.92;
  });
  const [r, g, b] = linear as [number, number, number];
  const x = r * 0.664511 + g * 0.154324 + b * 0.162028;
  const y = r * 0.283881 + g * 0.668433 + b * 0.047685;
  const z = r * 0.000088 + g * 0.07231 + b * 0.986039;
  const sum = x + y + z;
  return sum === 0 ? [0, 0] : [Number((x / sum).toFixed(3)), Number((y / sum).toFixed(3))];
}

function number(data: Attributes, key: string, minimum: number, maximum: number): number | undefined {
  const value = data[key];
  if (value === undefined) return undefined;
  if (typeof value !== 'number' || Number.isNaN(value) || value < minimum || value > maximum) {
    throw new ServiceError('invalid_format', `value must be a number between ${minimum} and ${maximum} for dictionary value @ data['${key}']. Got ${JSON.stringify(value)}`);
  }
  return value;
}

function lightOn(current: EntityState, data: Attributes): EntityState {
  const attributes = { ...current.attributes };
  const modes = (attributes.supported_color_modes as string[] | undefined) ?? ['onoff'];
  const wasOn = current.state === 'on';
  if (modes.includes('onoff')) return { state: 'on', attributes: { ...attributes, color_mode: 'onoff' } };
  const brightnessPercent = number(data, 'brightness_pct', 0, 100);
  const stepPercent = number(data, 'brightness_step_pct', -100, 100);
  let brightness = number(data, 'brightness', 0, 255) ?? (brightnessPercent === undefined ? undefined : Math.round((brightnessPercent / 100) * 255));
  if (stepPercent !== undefined) brightness = Math.round(Math.min(255, Math.max(0, ((wasOn ? (attributes.brightness as number) : 0) ?? 0) + (stepPercent / 100) * 255)));
  if (brightness === 0) return lightOff(current);
  attributes.brightness = brightness ?? (wasOn ? attributes.brightness : 255);
  const kelvin = number(data, 'color_temp_kelvin', 1000, 40000) ?? number(data, 'kelvin', 1000, 40000);
  const rgb = data.rgb_color as number[] | undefined;
  const hs = data.hs_color as number[] | undefined;
  if ((rgb || hs) && modes.includes('hs')) {
    const hsColor = hs ? [hs[0]!, hs[1]!] : hsFromRgb(rgb!);
    const rgbColor = rgb ?? rgbFromHs(hsColor);
    Object.assign(attributes, { color_mode: 'hs', hs_color: hsColor, rgb_color: rgbColor, xy_color: xyFromRgb(rgbColor), color_temp_kelvin: null });
  } else if (modes.includes('color_temp') && (kelvin !== undefined || !wasOn || attributes.color_mode === 'color_temp')) {
    const minimum = attributes.min_color_temp_kelvin as number;
    const maximum = attributes.max_color_temp_kelvin as number;
    const chosen = Math.min(maximum, Math.max(minimum, kelvin ?? ((attributes.color_temp_kelvin as number | null) ?? 2700)));
    const rgbColor = rgbFromKelvin(chosen);
    Object.assign(attributes, { color_mode: 'color_temp', color_temp_kelvin: chosen, rgb_color: rgbColor, hs_color: hsFromRgb(rgbColor), xy_color: xyFromRgb(rgbColor) });
  } else if (!wasOn) {
    attributes.color_mode = modes[0];
  }
  return { state: 'on', attributes };
}

function lightOff(current: EntityState): EntityState {
  return { state: 'off', attributes: { ...current.attributes, ...lightOffAttributes } };
}

function onOff(state: 'on' | 'off'): Effect {
  return (current) => ({ state, attributes: current.attributes });
}

function toggle(on: Effect, off: Effect): Effect {
  return (current, data) => (current.state === 'off' ? on(current, data) : off(current, data));
}

function fanOn(current: EntityState, data: Attributes): EntityState {
  const percentage = number(data, 'percentage', 0, 100);
  if (percentage === 0) return fanOff(current);
  if (!('percentage' in current.attributes)) return { state: 'on', attributes: current.attributes };
  return { state: 'on', attributes: { ...current.attributes, percentage: percentage ?? 67 } };
}

function fanOff(current: EntityState): EntityState {
  return { state: 'off', attributes: 'percentage' in current.attributes ? { ...current.attributes, percentage: 0 } : current.attributes };
}

function cover(state: 'open' | 'closed'): Effect {
  return (current) => ({ state, attributes: { ...current.attributes, current_position: state === 'open' ? 100 : 0 } });
}

function climateMode(current: EntityState, mode: string): EntityState {
  const modes = current.attributes.hvac_modes as string[];
  if (!modes.includes(mode)) throw new ServiceError('service_validation_error', `HVAC mode ${mode} is not valid. Valid HVAC modes are: ${modes.join(', ')}`);
  const target = current.attributes.temperature as number;
  const room = current.attributes.current_temperature as number;
  const action = mode === 'off' ? 'off' : (mode === 'heat' || mode === 'heat_cool') && room < target ? 'heating' : (mode === 'cool' || mode === 'heat_cool') && room > target ? 'cooling' : 'idle';
  return { state: mode, attributes: { ...current.attributes, hvac_action: action } };
}

function setTemperature(current: EntityState, data: Attributes): EntityState {
  const minimum = current.attributes.min_temp as number;
  const maximum = current.attributes.max_temp as number;
  const target = number(data, 'temperature', -100, 100);
  if (target === undefined) throw new ServiceError('invalid_format', "must contain at least one of temperature, target_temp_high, target_temp_low.");
  if (target < minimum || target > maximum) {
    throw new ServiceError('service_validation_error', `Provided temperature ${target} is not valid. Accepted range is ${minimum} to ${maximum}`);
  }
  const withTarget = { state: current.state, attributes: { ...current.attributes, temperature: target } };
  return climateMode(withTarget, typeof data.hvac_mode === 'string' ? data.hvac_mode : current.state);
}

function media(state: string, change: (data: Attributes) => Attributes = () => ({})): Effect {
  return (current, data) => ({ state, attributes: { ...current.attributes, ...change(data) } });
}

function mediaKeeping(change: (data: Attributes, current: EntityState) => Attributes): Effect {
  return (current, data) => {
    if (current.state === 'off') throw new ServiceError('home_assistant_error', `${current.attributes.friendly_name as string} is off`);
    return { state: current.state, attributes: { ...current.attributes, ...change(data, current) } };
  };
}

const entityField: Record<string, Field> = {};
const lightFields: Record<string, Field> = {
  brightness: { description: 'Number indicating brightness, where 0 turns the light off, 1 is the minimum brightness and 255 is the maximum brightness.', example: 120 },
  brightness_pct: { description: 'Number indicating the percentage of full brightness.', example: 47 },
  brightness_step_pct: { description: 'Change brightness by a percentage.', example: -25 },
  rgb_color: { description: 'The color in RGB format.', example: [255, 100, 100] },
  hs_color: { description: 'Color in hue/sat format.', example: [300, 70] },
  color_temp_kelvin: { description: 'Color temperature in Kelvin.', example: 4000 },
  transition: { description: 'Duration it takes to get to next state.', example: 2 },
};

/** domain → service → description and effect. */
export const services: Record<string, Record<string, Service>> = {
  light: {
    turn_on: { description: 'Turns on one or more lights and adjusts their properties, even when they are turned on already.', fields: lightFields, effect: lightOn },
    turn_off: { description: 'Turns off one or more lights.', fields: { transition: lightFields.transition! }, effect: lightOff },
    toggle: { description: 'Toggles one or more lights, from on to off, or off to on, based on their current state.', fields: lightFields, effect: toggle(lightOn, lightOff) },
  },
  switch: {
    turn_on: { description: 'Turns a switch on.', effect: onOff('on') },
    turn_off: { description: 'Turns a switch off.', effect: onOff('off') },
    toggle: { description: 'Toggles a switch on/off.', effect: toggle(onOff('on'), onOff('off')) },
  },
  fan: {
    turn_on: { description: 'Turns fan on.', fields: { percentage: { description: 'Speed of the fan.', example: 50 } }, effect: fanOn },
    turn_off: { description: 'Turns fan off.', effect: fanOff },
    toggle: { description: 'Toggles a fan on/off.', effect: toggle(fanOn, fanOff) },
    set_percentage: { description: 'Sets the speed of a fan.', fields: { percentage: { description: 'Speed of the fan.', example: 50 } }, effect: (current, data) => fanOn(current, { percentage: data.percentage }) },
  },
  lock: {
    lock: { description: 'Locks a lock.', fields: { code: { description: 'Code used to lock the lock.' } }, effect: (current) => ({ state: 'locked', attributes: current.attributes }) },
    unlock: { description: 'Unlocks a lock.', fields: { code: { description: 'Code used to unlock the lock.' } }, effect: (current) => ({ state: 'unlocked', attributes: current.attributes }) },
    open: { description: 'Opens a lock.', fields: { code: { description: 'Code used to open the lock.' } }, effect: (current) => ({ state: 'open', attributes: current.attributes }) },
  },
  cover: {
    open_cover: { description: 'Opens a cover.', effect: cover('open') },
    close_cover: { description: 'Closes a cover.', effect: cover('closed') },
    stop_cover: { description: 'Stops the cover movement.', effect: (current) => current },
    toggle: { description: 'Toggles a cover open/closed.', effect: (current, data) => (current.state === 'closed' ? cover('open') : cover('closed'))(current, data) },
    set_cover_position: {
      description: 'Moves a cover to a specific position.',
      fields: { position: { description: 'Target position.', example: 50 } },
      effect: (current, data) => {
        const position = number(data, 'position', 0, 100) ?? 0;
        return { state: position === 0 ? 'closed' : 'open', attributes: { ...current.attributes, current_position: position } };
      },
    },
  },
  climate: {
    set_temperature: {
      description: 'Sets the temperature setpoint.',
      fields: { temperature: { description: 'The temperature setpoint.', example: 21 }, hvac_mode: { description: 'HVAC operation mode.', example: 'heat' } },
      effect: setTemperature,
    },
    set_hvac_mode: { description: 'Sets HVAC operation mode.', fields: { hvac_mode: { description: 'HVAC operation mode.', example: 'heat' } }, effect: (current, data) => climateMode(current, String(data.hvac_mode)) },
    turn_on: { description: 'Turns climate device on.', effect: (current) => climateMode(current, current.state === 'off' ? 'heat' : current.state) },
    turn_off: { description: 'Turns climate device off.', effect: (current) => climateMode(current, 'off') },
    set_preset_mode: {
      description: 'Sets preset mode.',
      fields: { preset_mode: { description: 'Preset mode.', example: 'away' } },
      effect: (current, data) => {
        const presets = current.attributes.preset_modes as string[];
        if (!presets.includes(String(data.preset_mode))) throw new ServiceError('service_validation_error', `Preset mode ${String(data.preset_mode)} is not valid. Valid preset modes are: ${presets.join(', ')}`);
        return { state: current.state, attributes: { ...current.attributes, preset_mode: data.preset_mode } };
      },
    },
  },
  media_player: {
    turn_on: { description: 'Turns on the power of the media player.', effect: media('on') },
    turn_off: { description: 'Turns off the power of the media player.', effect: (current) => ({ state: 'off', attributes: stripMedia(current.attributes) }) },
    media_play: { description: 'Starts playing.', effect: media('playing') },
    media_pause: { description: 'Pauses.', effect: media('paused') },
    media_stop: { description: 'Stops playing.', effect: media('idle') },
    media_play_pause: { description: 'Toggles play/pause.', effect: (current, data) => media(current.state === 'playing' ? 'paused' : 'playing')(current, data) },
    volume_set: {
      description: 'Sets the volume level.',
      fields: { volume_level: { description: 'The volume. 0 is inaudible, 1 is the maximum volume.', example: 0.6 } },
      effect: mediaKeeping((data) => ({ volume_level: number(data, 'volume_level', 0, 1) })),
    },
    volume_mute: { description: 'Mutes or unmutes the media player.', fields: { is_volume_muted: { description: 'Defines whether or not it is muted.', example: true } }, effect: mediaKeeping((data) => ({ is_volume_muted: data.is_volume_muted === true })) },
    select_source: {
      description: 'Sends the media player the command to change input source.',
      fields: { source: { description: 'Name of the source to switch to.', example: 'HDMI 1' } },
      effect: (current, data) => {
        const sources = current.attributes.source_list as string[];
        if (!sources.includes(String(data.source))) throw new ServiceError('service_validation_error', `Source ${String(data.source)} is not valid. Valid sources are: ${sources.join(', ')}`);
        return { state: current.state === 'off' ? 'on' : current.state, attributes: { ...current.attributes, source: data.source } };
      },
    },
  },
};

function stripMedia(attributes: Attributes): Attributes {
  const { source: _source, volume_level: _volume, is_volume_muted: _muted, media_title: _title, ...rest } = attributes;
  return rest;
}

const genericDomains = ['light', 'switch', 'fan', 'media_player', 'climate'];

/** `homeassistant.turn_on|turn_off|toggle`: the same service of each entity's own domain. */
export function homeAssistantService(service: string, domain: string): Service | undefined {
  if (!['turn_on', 'turn_off', 'toggle'].includes(service)) return undefined;
  if (domain === 'cover') return services.cover![service === 'turn_on' ? 'open_cover' : service === 'turn_off' ? 'close_cover' : 'toggle'];
  if (domain === 'lock' && service !== 'toggle') return services.lock![service === 'turn_on' ? 'unlock' : 'lock'];
  if (!genericDomains.includes(domain)) return undefined;
  return services[domain]![service];
}

export const homeAssistantDescriptions: Record<string, { description: string }> = {
  turn_on: { description: 'Generic action to turn devices on under any domain.' },
  turn_off: { description: 'Generic action to turn devices off under any domain.' },
  toggle: { description: 'Generic action to toggle devices on/off under any domain.' },
};

/** The `get_services` answer: `{domain: {service: {name, description, fields, target}}}`. */
export function serviceDescriptions(): Record<string, Record<string, unknown>> {
  const described: Record<string, Record<string, unknown>> = {};
  for (const [domain, domainServices] of Object.entries(services)) {
    described[domain] = {};
    for (const [name, service] of Object.entries(domainServices)) {
      described[domain][name] = {
        name: name.replaceAll('_', ' ').replace(/^./, (letter) => letter.toUpperCase()),
        description: service.description,
        fields: Object.fromEntries(Object.entries(service.fields ?? entityField).map(([field, info]) => [field, { name: field, ...info, required: field === 'temperature' || (field === 'hvac_mode' && name === 'set_hvac_mode') }])),
        target: { entity: [{ domain: [domain] }] },
      };
    }
  }
  described.homeassistant = Object.fromEntries(Object.entries(homeAssistantDescriptions).map(([name, info]) => [name, { name, ...info, fields: {}, target: { entity: [{}] } }]));
  return described;
}
