const maximumTopicBytes = 65_535;

/** Why `topic` cannot be published to, or undefined when it can. */
export function publishTopicProblem(topic: string): string | undefined {
  if (topic === '') return 'Send topic: the topic to publish to, e.g. "zigbee2mqtt/kitchen_plug/set".';
  if (/[+#]/.test(topic)) {
    return `"${topic}" holds a wildcard (+ or #), which only a read may use; publish to one exact topic, e.g. "zigbee2mqtt/kitchen_plug/set".`;
  }
  return commonProblem(topic);
}

/** Why `filter` cannot be read, or undefined when it can. */
export function readFilterProblem(filter: string): string | undefined {
  if (filter === '') return 'Send topic: a topic or a filter with wildcards, e.g. "zigbee2mqtt/+/state" or "tasmota/#".';
  const levels = filter.split('/');
  const hashAt = levels.findIndex((level) => level.includes('#'));
  if (hashAt !== -1 && (levels[hashAt] !== '#' || hashAt !== levels.length - 1)) {
    return `"${filter}": # stands alone as the last level, e.g. "tasmota/#".`;
  }
  if (levels.some((level) => level.includes('+') && level !== '+')) {
    return `"${filter}": + stands alone for one whole level, e.g. "zigbee2mqtt/+/state".`;
  }
  return commonProblem(filter);
}

function commonProblem(topic: string): string | undefined {
  if (topic.includes('\u0000')) return 'A topic cannot hold a NUL character.';
  if (Buffer.byteLength(topic) > maximumTopicBytes) return `A topic is at most ${maximumTopicBytes} bytes long.`;
  return undefined;
}
