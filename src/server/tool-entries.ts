import path from 'node:path';
import type { ToolSummary } from '../protocol/events.ts';
import type { ToolRegistry } from '../tools/tool-registry.ts';
import type { LoadFailure } from '../tools/user-tools/protocol.ts';
import type { ToolSwitches } from '../tools/user-tools/tool-switches.ts';
import type { UserToolManager } from '../tools/user-tools/user-tool-manager.ts';

export type UserToolStatus = 'loaded' | 'failed' | 'disabled';

/** A tool as GET /agents/tools shows it; user and MCP tools say where they come from and whether they are on. */
export type ToolEntry =
  | ToolSummary
  | (ToolSummary & { source: 'user'; enabled: boolean; file: string; status: UserToolStatus; error?: string })
  | (ToolSummary & { source: 'mcp'; server: string; enabled: boolean });

/** A load error GET /agents/tools reports: a user-tool file, the switches file, mcp.json or one MCP server. */
export interface ToolLoadError extends LoadFailure {
  /** The MCP server the error is about. */
  server?: string;
}

const toolFilePattern = /^[^_.][^/\\]*\.(?:ts|mts|js|mjs)$/;

interface Sources {
  registry: ToolRegistry;
  userTools: Pick<UserToolManager, 'errors' | 'fileOf'>;
  switches: Pick<ToolSwitches, 'isEnabled' | 'isOnEverywhere' | 'errors'>;
  mcp: { errors(): ToolLoadError[] };
}

/**
 * Every tool: the registry's, each user tool with its file, switch and status, each MCP tool with
 * its server and switch, then the user-tool files that failed to load (named after their file, as
 * a tool must be) with their error.
 */
export function toolEntries({ registry, userTools, switches }: Omit<Sources, 'mcp'>): ToolEntry[] {
  const entries: ToolEntry[] = registry.summaries().map((summary) => {
    // An MCP tool is "on" once switched on for every profile; otherwise only profiles naming it have it.
    if (summary.source === 'mcp') return { ...summary, source: 'mcp', server: summary.server ?? '', enabled: switches.isOnEverywhere(summary.name) };
    if (summary.source !== 'user') return summary;
    const enabled = switches.isEnabled(summary.name);
    return { ...summary, source: 'user', enabled, file: userTools.fileOf(summary.name) ?? `${summary.name}.ts`, status: enabled ? 'loaded' : 'disabled' };
  });
  const loaded = new Set(entries.filter((entry) => entry.source === 'user').map((entry) => entry.name));
  for (const failure of failedToolFiles(userTools.errors())) {
    const name = path.basename(failure.file, path.extname(failure.file));
    if (loaded.has(name)) continue;
    entries.push({
      name,
      description: '',
      parameters: {},
      source: 'user',
      enabled: switches.isEnabled(name),
      file: failure.file,
      status: 'failed',
      error: failure.message,
    });
    loaded.add(name);
  }
  return entries;
}

/** Load errors of tool files at the top of TOOLS_DIR (not helpers, not permissions.json). */
function failedToolFiles(errors: LoadFailure[]): LoadFailure[] {
  return errors.filter((failure) => toolFilePattern.test(failure.file));
}

/** The load errors GET /agents/tools reports: the user tools', the switches file's and the MCP servers'. */
export function toolErrors({ userTools, switches, mcp }: Pick<Sources, 'userTools' | 'switches' | 'mcp'>): ToolLoadError[] {
  return [...userTools.errors(), ...switches.errors(), ...mcp.errors()];
}
