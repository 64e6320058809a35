/** A server address as it may be shown: protocol, host, port and path, never a login inside the URL. */
export function shownUrl(url: string): string {
  try {
    const parsed = new URL(url);
    parsed.username = '';
    parsed.password = '';
    return parsed.toString().replace(/\/$/, '');
  } catch {
    return '(an invalid URL)';
  }
}

/** The socket error's code (ECONNREFUSED, ENOTFOUND…) inside whatever wraps it; undefined when none. */
export function socketErrorCode(error: unknown): string | undefined {
  let current: unknown = error;
  for (let depth = 0; depth < 6 && typeof current === 'object' && current !== null; depth += 1) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string' && /^E[A-Z0-9_]+$/.test(code)) return code;
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}

/**
 * Why a speech server could not be reached, with the fix: e.g. "Wyoming server at tcp://host:10300
 * refused the connection: is wyoming-faster-whisper running?".
 */
export function unreachableMessage(server: string, address: string, code: string | undefined, runningWhat: string): string {
  const at = `${server} at ${address}`;
  switch (code) {
    case 'ECONNREFUSED':
      return `${at} refused the connection: is ${runningWhat} running, and on that port?`;
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return `${at} cannot be found: the host name does not resolve. Check the host in the URL.`;
    case 'ETIMEDOUT':
    case 'ECONNABORTED':
      return `${at} did not answer in time: check that the host is up and that no firewall drops the port.`;
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
      return `${at} is unreachable from this machine: check the address and the network.`;
    case 'ECONNRESET':
    case 'EPIPE':
      return `${at} closed the connection: check that ${runningWhat} is what listens there, and its log.`;
    default:
      return `${at} could not be reached${code ? ` (${code})` : ''}: is ${runningWhat} running?`;
  }
}
