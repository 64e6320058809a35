import type { HassEntity } from 'home-assistant-js-websocket';

/** Lower-case words of a name or id, plurals folded ("Lights" and "light" are one word). */
export function wordsOf(text: string): string[] {
  const words: string[] = [];
  for (const raw of text.toLowerCase().split(/[^\p{L}\p{N}]+/u)) {
    if (raw !== '') words.push(singular(raw));
  }
  return words;
}

function singular(word: string): string {
  if (word.length > 3 && word.endsWith('s') && !word.endsWith('ss') && !word.endsWith('us')) return word.slice(0, -1);
  return word;
}

/** What an everyday word says about the kind of entity meant, beyond its name. */
type KindTest = (entity: HassEntity, domain: string) => boolean;

const inDomain =
  (...domains: string[]): KindTest =>
  (_entity, domain) =>
    domains.includes(domain);

const ofClass =
  (domain: string, ...deviceClasses: string[]): KindTest =>
  (entity, entityDomain) =>
    entityDomain === domain && deviceClasses.includes(String(entity.attributes.device_class ?? ''));

const either =
  (...tests: KindTest[]): KindTest =>
  (entity, domain) =>
    tests.some((test) => test(entity, domain));

const measuresTemperature: KindTest = (entity, domain) =>
  domain === 'climate' ||
  (domain === 'sensor' && (entity.attributes.device_class === 'temperature' || /\u00B0[CF]/.test(String(entity.attributes.unit_of_measurement ?? ''))));

const kindWords = new Map<string, KindTest>([
  ['light', inDomain('light')],
  ['lamp', inDomain('light')],
  ['bulb', inDomain('light')],
  ['switch', inDomain('switch')],
  ['plug', inDomain('switch')],
  ['socket', inDomain('switch')],
  ['outlet', inDomain('switch')],
  ['temperature', measuresTemperature],
  ['temp', measuresTemperature],
  ['warm', measuresTemperature],
  ['cold', measuresTemperature],
  ['thermostat', inDomain('climate')],
  ['heating', inDomain('climate')],
  ['heater', inDomain('climate')],
  ['humidity', ofClass('sensor', 'humidity')],
  ['lock', inDomain('lock')],
  ['door', either(inDomain('lock'), ofClass('binary_sensor', 'door', 'garage_door'), ofClass('cover', 'door', 'garage'))],
  ['window', either(ofClass('binary_sensor', 'window'), ofClass('cover', 'window'))],
  ['blind', inDomain('cover')],
  ['shade', inDomain('cover')],
  ['curtain', inDomain('cover')],
  ['shutter', inDomain('cover')],
  ['cover', inDomain('cover')],
  ['motion', ofClass('binary_sensor', 'motion', 'occupancy', 'presence')],
  ['fan', inDomain('fan')],
  ['tv', inDomain('media_player')],
  ['speaker', inDomain('media_player')],
  ['music', inDomain('media_player')],
  ['alarm', inDomain('alarm_control_panel')],
  ['camera', inDomain('camera')],
  ['vacuum', inDomain('vacuum')],
  ['scene', inDomain('scene')],
  ['script', inDomain('script')],
  ['automation', inDomain('automation')],
  ['sensor', inDomain('sensor', 'binary_sensor')],
  ['valve', inDomain('valve')],
  ['siren', inDomain('siren')],
  ['battery', ofClass('sensor', 'battery')],
  ['power', ofClass('sensor', 'power', 'energy')],
]);

/** The query words that name the entity's kind: its domain, "lamp" for a light, "temperature" for a °C sensor or a thermostat. */
export function kindWordsOf(entity: HassEntity, domain: string): string[] {
  const words = [domain];
  for (const [word, test] of kindWords) if (word !== domain && test(entity, domain)) words.push(word);
  return words;
}
