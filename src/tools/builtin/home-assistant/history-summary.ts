import type { HassEntity } from 'home-assistant-js-websocket';

const unavailable = new Set(['unavailable', 'unknown', '']);

function round(number: number): string {
  return String(Math.round(number * 100) / 100);
}

/**
 * One line for an entity's history: first and last state, min/max/mean for numbers, how many
 * changes and, for on/off-like states, how often each state was reached. Never the rows.
 */
export function summariseHistory(entityId: string, states: readonly HassEntity[], hours: number): string {
  if (states.length === 0) return `${entityId}: no history in the last ${hours} h`;
  const first = states[0]!;
  const last = states[states.length - 1]!;
  const unit = String(last.attributes?.unit_of_measurement ?? first.attributes?.unit_of_measurement ?? '');
  const withUnit = (text: string) => (unit ? `${text} ${unit}` : text);
  let changes = 0;
  for (let position = 1; position < states.length; position++) if (states[position]!.state !== states[position - 1]!.state) changes++;
  const parts = [`first ${withUnit(first.state)} at ${first.last_changed}`, `last ${withUnit(last.state)} at ${last.last_changed}`, `${changes} changes`];
  const known = states.filter((state) => !unavailable.has(state.state));
  const numbers = known.map((state) => Number(state.state));
  if (known.length > 0 && numbers.every(Number.isFinite)) {
    const mean = numbers.reduce((sum, number) => sum + number, 0) / numbers.length;
    parts.push(`min ${withUnit(round(Math.min(...numbers)))}`, `max ${withUnit(round(Math.max(...numbers)))}`, `mean ${withUnit(round(mean))}`);
  } else if (known.length > 0) {
    const reached = new Map<string, number>();
    for (let position = 0; position < states.length; position++) {
      const state = states[position]!.state;
      if (position === 0 || state !== states[position - 1]!.state) reached.set(state, (reached.get(state) ?? 0) + 1);
    }
    parts.push(`times reached: ${[...reached].map(([state, count]) => `${state} ${count}`).join(', ')}`);
  }
  const gaps = states.length - known.length;
  if (gaps > 0) parts.push(`${gaps} unavailable readings`);
  return `${entityId} (last ${hours} h): ${parts.join('; ')}`;
}
