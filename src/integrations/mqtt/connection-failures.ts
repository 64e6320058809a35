/** The broker's address without the user name and password a URL may carry, for messages and logs. */
export function brokerAddress(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.protocol}//${parsed.host}`;
  } catch {
    return 'the configured MQTT_URL';
  }
}

const loginRefusedCodes = new Set([4, 5, 134, 135]);

const socketProblems: Record<string, string> = {
  ECONNREFUSED: 'connection refused',
  ECONNRESET: 'connection reset',
  ENOTFOUND: 'host not found',
  EAI_AGAIN: 'host name lookup failed',
  ETIMEDOUT: 'timed out',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
};

/** A message a person can act on for an error the MQTT client reported; never the error's own text, which may hold more than it should. */
export function describeConnectionError(error: Error & { code?: unknown }, address: string): string {
  const { code } = error;
  if (typeof code === 'number') {
    if (loginRefusedCodes.has(code)) {
      return `The MQTT broker at ${address} refused the login (not authorized): check MQTT_USERNAME and MQTT_PASSWORD.`;
    }
    return `The MQTT broker at ${address} refused the connection (reason code ${code}); check its log and MQTT_URL.`;
  }
  const problem = typeof code === 'string' ? (socketProblems[code] ?? code) : 'connection error';
  return `Cannot reach the MQTT broker at ${address} (${problem}): check that it runs and that MQTT_URL is right. Hearth keeps retrying.`;
}

export function describeSilentClose(address: string, timedOut: boolean, timeoutSeconds: number): string {
  return timedOut
    ? `The MQTT broker at ${address} did not accept the connection within ${timeoutSeconds} s: check MQTT_URL (host, port, mqtt:// or mqtts://). Hearth keeps retrying.`
    : `The MQTT broker at ${address} closed the connection before accepting it: check MQTT_URL and the broker's log. Hearth keeps retrying.`;
}
