import { readFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { ErrorObject } from 'ajv';
import { fieldName, valueAt } from '../../json-pointer.ts';
import { validateHttpEntry, validateStdioEntry } from './mcp-entry-validators.ts';

/** One MCP server of MCP_CONFIG_FILE: a program Hearth starts (stdio) or an endpoint it reaches (Streamable HTTP). */
export type McpServerConfig = (
  | { name: string; transport: 'stdio'; command: string; args: string[]; env: Record<string, string>; cwd?: string; jail: McpJail }
  | { name: string; transport: 'http'; url: string; headers: Record<string, string> }
) & {
  /** `"trusted": true`: its results are the person's own data, not outside content (docs/security.md: Untrusted content). */
  trusted: boolean;
};

export type McpTransportKind = McpServerConfig['transport'];

/** A problem with the file or one of its servers; `file` is the file's base name. */
export interface McpConfigError {
  file: string;
  server?: string;
  message: string;
}

export interface McpConfig {
  /** The servers whose entries are good, in the file's order (disabled ones left out). */
  servers: McpServerConfig[];
  errors: McpConfigError[];
  /** False when the file as a whole could not be used (unreadable, not JSON, no `mcpServers` mapping). */
  readable: boolean;
  /** Servers named in the file whose entries are wrong: a running one keeps its last good settings. */
  invalid: string[];
}

/**
 * Server names become part of tool names (`<server>__<tool>`) and of `mcp:<server>` in profiles:
 * function-name characters only, short enough to leave room for the tool's name, and no `__`
 * so the split between server and tool stays plain.
 */
const serverNamePattern = /^[A-Za-z0-9_-]{1,40}$/;

/** What a stdio server's jail grants on top of the system and its own files, or `false`: unjailed, on purpose. */
export type McpJail = false | { paths: Record<string, 'ro' | 'rw'>; network: boolean };

function isHttpUrl(value: string): boolean {
  try {
    return ['http:', 'https:'].includes(new URL(value).protocol);
  } catch {
    return false;
  }
}

/** Reads MCP_CONFIG_FILE; a missing file means no servers. Relative `cwd`s are resolved against `dataDir`. */
export async function readMcpConfig(configFile: string, dataDir: string): Promise<McpConfig> {
  let text: string;
  try {
    text = await readFile(configFile, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { servers: [], errors: [], readable: true, invalid: [] };
    return unreadable(configFile, `cannot read the file: ${(error as Error).message}`);
  }
  return parseMcpConfig(configFile, text, dataDir);
}

export function parseMcpConfig(configFile: string, text: string, dataDir: string): McpConfig {
  const source = text.replace(/^\uFEFF/, '');
  // An empty file says as plainly as `{}` that no server is configured.
  if (source.trim() === '') return { servers: [], errors: [], readable: true, invalid: [] };
  let data: unknown;
  try {
    data = JSON.parse(source);
  } catch (error) {
    return unreadable(configFile, describeJsonError(source, error as Error));
  }
  if (!isMapping(data)) return unreadable(configFile, 'the file must hold a JSON object: {"mcpServers": {"<name>": {...}}}');
  // Other keys (a whole claude_desktop_config.json, say) are left alone: only `mcpServers` is Hearth's.
  const entries = data.mcpServers;
  if (entries === undefined) return unreadable(configFile, 'missing "mcpServers": the file must be {"mcpServers": {"<name>": {...}}}');
  if (!isMapping(entries)) return unreadable(configFile, `"mcpServers" must be an object of servers by name, not ${describeValue(entries)}`);

  const file = path.basename(configFile);
  const servers: McpServerConfig[] = [];
  const errors: McpConfigError[] = [];
  const invalid: string[] = [];
  for (const [name, entry] of Object.entries(entries)) {
    const result = parseServer(name, entry, dataDir);
    if (typeof result === 'string') {
      errors.push({ file, ...(name !== '' && { server: name }), message: result });
      invalid.push(name);
    } else if (result !== undefined) {
      servers.push(result);
    }
  }
  return { servers, errors, readable: true, invalid };
}

/** Whether two settings of one server would start the same connection. */
export function sameServerConfig(left: McpServerConfig, right: McpServerConfig): boolean {
  return canonicalJson(left) === canonicalJson(right);
}

/** The server's settings, or why its entry is wrong; undefined for a disabled server. */
function parseServer(name: string, entry: unknown, dataDir: string): McpServerConfig | string | undefined {
  if (name === '') return 'a server name must not be empty';
  if (!serverNamePattern.test(name) || name.includes('__')) {
    return `the server name "${name}" must be letters, digits, _ or - (at most 40 characters, no "__"): it becomes part of tool names`;
  }
  if (!isMapping(entry)) return `the entry must be an object with "command" or "url", not ${describeValue(entry)}`;
  if (entry.type === 'sse') return 'the SSE transport is not supported: give the server\'s Streamable HTTP "url" (often ending in /mcp)';
  const hasCommand = 'command' in entry;
  const hasUrl = 'url' in entry;
  if (hasCommand && hasUrl) return 'give either "command" (a program Hearth starts) or "url" (a Streamable HTTP endpoint), not both';
  if (!hasCommand && !hasUrl) return 'missing "command" (a program Hearth starts) or "url" (a Streamable HTTP endpoint)';

  if (hasCommand) {
    if (!validateStdioEntry(entry)) return describeSchemaErrors(validateStdioEntry.errors ?? [], entry);
    if (entry.disabled === true) return undefined;
    return {
      name,
      transport: 'stdio',
      command: entry.command,
      args: entry.args ?? [],
      env: entry.env ?? {},
      ...(entry.cwd !== undefined && { cwd: path.resolve(dataDir, entry.cwd) }),
      jail: entry.jail === false ? false : { paths: resolvedPaths(entry.jail?.paths ?? {}, dataDir), network: entry.jail?.network ?? false },
      trusted: entry.trusted === true,
    };
  }
  const valid = validateHttpEntry(entry);
  const problems = valid ? [] : (validateHttpEntry.errors ?? []).map((error) => describeSchemaError(error, entry));
  // Checked here rather than as a schema format: the build compiles the schema ahead, without this function.
  if (typeof entry.url === 'string' && !isHttpUrl(entry.url)) problems.push(`"url" must be an http:// or https:// URL, not ${describeValue(entry.url)}`);
  if (!valid || problems.length > 0) return [...new Set(problems)].join('; ');
  if (entry.disabled === true) return undefined;
  return { name, transport: 'http', url: entry.url, headers: entry.headers ?? {}, trusted: entry.trusted === true };
}

function unreadable(configFile: string, message: string): McpConfig {
  return { servers: [], errors: [{ file: path.basename(configFile), message }], readable: false, invalid: [] };
}

function describeJsonError(source: string, error: Error): string {
  const position = /at position (\d+)/.exec(error.message);
  const reason = error.message.replace(/ in JSON at position \d+.*$/s, '').replace(/ \(line \d+ column \d+\)$/, '');
  if (!position) return `not valid JSON: ${reason}`;
  const before = source.slice(0, Number(position[1]));
  const line = before.split('\n').length;
  const column = before.length - before.lastIndexOf('\n');
  return `not valid JSON at line ${line}, column ${column}: ${reason}`;
}

function describeSchemaErrors(errors: ErrorObject[], entry: Record<string, unknown>): string {
  return [...new Set(errors.map((error) => describeSchemaError(error, entry)))].join('; ');
}

function describeSchemaError(error: ErrorObject, entry: Record<string, unknown>): string {
  const field = fieldName(error.instancePath);
  switch (error.keyword) {
    case 'additionalProperties': {
      const key = String(error.params.additionalProperty);
      if (key === 'headers') return 'unknown field "headers": headers belong to a "url" server';
      if (['args', 'env', 'cwd', 'jail'].includes(key)) return `unknown field "${key}": it belongs to a "command" server`;
      return `unknown field "${key}"`;
    }
    case 'required':
      return `missing "${String(error.params.missingProperty)}"`;
    case 'enum':
      return `"${field}" must be one of: ${(error.params.allowedValues as unknown[]).join(', ')}`;
    case 'type':
      return `"${field}" must be ${describeType(String(error.params.type))}, not ${describeValue(valueAt(entry, error.instancePath))}`;
    case 'minLength':
      return `"${field}" must not be empty`;
    default:
      return `"${field}" ${error.message ?? 'is invalid'}`;
  }
}

function describeType(type: string): string {
  switch (type) {
    case 'string':
      return 'text';
    case 'array':
      return 'a list';
    case 'object':
      return 'an object';
    case 'boolean':
      return 'true or false';
    default:
      return type;
  }
}

function describeValue(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'string') return JSON.stringify(value.length > 60 ? `${value.slice(0, 60)}…` : value);
  if (typeof value === 'object') return 'an object';
  if (typeof value === 'number') return `the number ${value}`;
  return String(value);
}

function isMapping(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** JSON with every object's keys sorted, so a reordered entry is the same entry. */
function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, inner: unknown) =>
    isMapping(inner) ? Object.fromEntries(Object.entries(inner).sort(([left], [right]) => (left < right ? -1 : left > right ? 1 : 0))) : inner,
  );
}

/** Granted paths as absolute paths (`~` is the home folder; relative ones are resolved against DATA_DIR, as `cwd` is). */
function resolvedPaths(paths: Record<string, 'ro' | 'rw'>, dataDir: string): Record<string, 'ro' | 'rw'> {
  return Object.fromEntries(Object.entries(paths).map(([entry, access]) => [path.resolve(dataDir, entry.replace(/^~(?=$|\/)/, os.homedir())), access]));
}
