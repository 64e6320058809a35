import path from 'node:path';
import type { ToolSummary } from '../../agent/events.ts';
import type { ToolRegistry } from '../tool-registry.ts';
import type { LoadFailure } from './protocol.ts';
import type { ToolSwitches } from './tool-switches.ts';
import type { UserToolManager } from './user-tool-manager.ts';

export type UserToolStatus = 'loaded' | 'failed' | 'disabled';

/** A tool as GET /agents/tools shows it; user tools say where they come from and whether they are on. */
export type ToolEntry =
  | ToolSummary
  | (ToolSummary & { source: 'user'; enabled: boolean; file: string; status: UserToolStatus; error?: string });

const toolFilePattern = /^[^_.][^/\\]*\.(?:ts|mts|js|mjs)$/;

interface Sources {
  registry: ToolRegistry;
  userTools: Pick<UserToolManager, 'errors' | 'fileOf'>;
  switches: Pick<ToolSwitches, 'isEnabled' | 'errors'>;
}

/**
 * Every tool: the registry's, each user tool with its file, switch and status, then the user-tool
 * files that failed to load (named after their file, as a tool must be) with their error.
 */
export function toolEntries({ registry, userTools, switches }: Sources): ToolEntry[] {
  const entries: ToolEntry[] = registry.summaries().map((summary) => {
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

/** The load errors GET /agents/tools reports: the user tools' and the switches file's. */
export function toolErrors({ userTools, switches }: Pick<Sources, 'userTools' | 'switches'>): LoadFailure[] {
  return [...userTools.errors(), ...switches.errors()];
}
