import { existsSync, statSync } from 'node:fs';
import path from 'node:path';
import { interpreterFolders } from '../../jail/interpreters.ts';
import type { JailSpec } from '../../jail/jail-spec.ts';
import type { McpServerConfig } from './mcp-config.ts';

type StdioConfig = Extract<McpServerConfig, { transport: 'stdio' }>;

/** The outermost `node_modules` folder holding a file: a package's script imports its neighbours from there. */
function packageTree(file: string): string | undefined {
  const parts = file.split(path.sep);
  const index = parts.indexOf('node_modules');
  return index === -1 ? undefined : parts.slice(0, index + 1).join(path.sep);
}

/** `node_modules` folders a script outside any package resolves its imports from (its folder and each parent). */
function resolvingFolders(folder: string): string[] {
  const found: string[] = [];
  for (let current = folder; ; current = path.dirname(current)) {
    const candidate = path.join(current, 'node_modules');
    if (existsSync(candidate)) found.push(candidate);
    if (path.dirname(current) === current) return found;
  }
}

function isFile(candidate: string): boolean {
  try {
    return statSync(candidate).isFile();
  } catch {
    return false;
  }
}

/** Whether the server is started through npx or npm, which install packages into an npm cache. */
export function usesNpm(config: StdioConfig): boolean {
  const base = path.basename(config.command);
  return base === 'npx' || base === 'npm';
}

/** The npm cache of MCP servers: under DATA_DIR, never the person's `~/.npm`, which their own unjailed npx trusts. */
export function mcpNpmCache(dataDir: string): string {
  return path.join(path.resolve(dataDir), 'npm-cache');
}

/**
 * The files an MCP server's command needs besides the system: the Node.js installation, the
 * script it is given (and the packages it imports), and for npx or npm Hearth's own npm cache
 * for MCP servers (read-write, as npx installs there on first use).
 */
function commandFiles(config: StdioConfig, npmCache: string | undefined): { readable: string[]; writable: string[] } {
  const readable = [...interpreterFolders()];
  const writable: string[] = [];
  if (usesNpm(config) && npmCache !== undefined) writable.push(npmCache);
  const folder = config.cwd ?? process.cwd();
  for (const word of [config.command, ...config.args]) {
    if (!word.includes('/')) continue;
    const file = path.resolve(folder, word);
    // The system is in every jail already, read-only.
    if (!isFile(file) || /^\/(usr|bin|sbin|lib\w*)\//.test(file)) continue;
    const tree = packageTree(file);
    if (tree !== undefined) readable.push(tree);
    else readable.push(path.dirname(file), ...resolvingFolders(path.dirname(file)));
  }
  return { readable, writable };
}

/**
 * The strict jail of a stdio MCP server, from its mcp.json entry; undefined for `"jail": false`.
 * `npmCache` is the folder npx and npm get as their cache (`npm_config_cache`), made beforehand.
 */
export function mcpJailSpec(config: StdioConfig, npmCache?: string): JailSpec | undefined {
  if (config.jail === false) return undefined;
  const own = commandFiles(config, npmCache);
  const granted = Object.entries(config.jail.paths);
  const writable = [...granted.filter(([, access]) => access === 'rw').map(([entry]) => entry), ...own.writable.filter(existsSync)];
  const readable = [...granted.filter(([, access]) => access === 'ro').map(([entry]) => entry), ...own.readable, ...(config.cwd ? [config.cwd] : [])];
  return { kind: 'strict', writable, readable, network: config.jail.network, cwd: config.cwd ?? writable[0] ?? '/' };
}
