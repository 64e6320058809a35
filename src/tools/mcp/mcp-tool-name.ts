import { createHash } from 'node:crypto';

/** The longest tool name the LLM APIs accept (OpenAI's limit; Ollama passes names on to models trained on it). */
export const maximumToolNameLength = 64;

const hashLength = 6;
const unsafeCharacters = /[^A-Za-z0-9_-]/gu;

/**
 * The Hearth name of an MCP server's tool: `<server>__<tool>`, each character outside
 * `[A-Za-z0-9_-]` (MCP allows `.`, and servers send spaces, `/`, accents…) replaced by `_`.
 * A name longer than 64 characters keeps its first 57 and ends in `_` and six hex digits of
 * the SHA-256 of the original server and tool names, so it stays stable across restarts and
 * two long names sharing a beginning stay apart.
 *
 * `hashed` adds that suffix even to a short name: mcpTools() asks for it when two tools of one
 * server differ only in characters sanitising replaced (`files.read` and `files_read`), so each
 * keeps a name of its own. Without such a clash names stay as readable as the server made them.
 */
export function mcpToolName(server: string, tool: string, options: { hashed?: boolean } = {}): string {
  const name = `${server}__${tool}`.replace(unsafeCharacters, '_');
  if (name.length <= maximumToolNameLength && !options.hashed) return name;
  const suffix = `_${createHash('sha256').update(`${server}\u0000${tool}`).digest('hex').slice(0, hashLength)}`;
  return name.slice(0, maximumToolNameLength - suffix.length) + suffix;
}

/** Whether sanitising changed anything: the name the server gave is not the one the model sees. */
export function isSanitised(server: string, tool: string): boolean {
  return `${server}__${tool}`.replace(unsafeCharacters, '_') !== `${server}__${tool}`;
}
