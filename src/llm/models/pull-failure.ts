import { errorMessage, isRecord, networkFailureReason } from '../errors.ts';

/** Why a pull failed, in words a person can act on, from what Ollama or the connection to it said. */
export function describePullFailure(error: unknown, name: string, host: string, connected: boolean): string {
  const reason = networkFailureReason(error) ?? fetchFailure(error);
  if (reason && !connected) return `Cannot reach Ollama at ${host} (${reason}). Is \`ollama serve\` running?`;
  if (reason) return `The connection to Ollama at ${host} broke during the pull (${reason}).`;
  const message = errorMessage(isRecord(error) && typeof error['error'] === 'string' ? error['error'] : error);
  if (/file does not exist|manifest unknown|not found/i.test(message)) return `Ollama has no model named ${name}.`;
  if (/no space left|not enough (disk )?space|insufficient (disk )?space/i.test(message)) return `Not enough disk space for ${name} (Ollama: ${message}).`;
  if (/digest mismatch/i.test(message)) return `The download of ${name} arrived damaged (digest mismatch); pull it again.`;
  if (/dial tcp|lookup |no such host|i\/o timeout|connection refused|network is unreachable|tls handshake|registry/i.test(message)) {
    return `Ollama could not reach the registry (${message}).`;
  }
  if (/did not receive done or success/i.test(message)) return `Ollama ended the pull of ${name} without finishing it.`;
  return `Ollama could not pull ${name}: ${message}`;
}

/** What undici's bare "fetch failed" hides in its cause (a refused port, "bad port"). */
function fetchFailure(error: unknown): string | undefined {
  if (!(error instanceof TypeError) || error.message !== 'fetch failed') return undefined;
  return error.cause instanceof Error ? error.cause.message : 'fetch failed';
}
