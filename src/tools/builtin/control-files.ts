import path from 'node:path';
import type { Config } from '../../config.ts';
import { isInside, realpathAllowingMissing } from '../host-files/path-access.ts';

/**
 * Hearth's own control files and folders. The filesystem tool never writes them, whatever
 * FS_ALLOWED_PATHS says: a model that could edit a profile could rewrite its own approval
 * rules, and one that could drop a file in TOOLS_DIR would skip write_tool's question.
 * The database and `.env` are not read either: they hold every session and the secrets.
 */
interface ControlPath {
  path: string;
  folder: boolean;
  what: string;
  /** Why it is refused and what to do instead, after "… whatever FS_ALLOWED_PATHS says." */
  instead: string;
  readable: boolean;
}

function controlPaths(config: Config, workingFolder: string): ControlPath[] {
  const at = (setting: string) => path.resolve(workingFolder, setting);
  const database = at(config.DB_PATH);
  const entries: ControlPath[] = [
    { path: at(config.PROFILES_DIR), folder: true, what: 'in PROFILES_DIR, where the profiles and their approval rules live', instead: 'Ask the person to change the profile.', readable: true },
    { path: at(config.TOOLS_DIR), folder: true, what: 'in TOOLS_DIR, where user tools live', instead: 'Use write_tool to create or change a user tool.', readable: true },
    { path: at(config.MANUALS_DIR), folder: true, what: 'in MANUALS_DIR, Hearth\'s tool manuals', instead: 'Ask the person if a manual needs changing.', readable: true },
    { path: at(config.DATA_DIR), folder: true, what: 'in DATA_DIR, Hearth\'s database and state', instead: 'Hearth\'s state is not for tools.', readable: true },
    ...['', '-wal', '-shm', '-journal'].map((suffix) => ({
      path: database + suffix,
      folder: false,
      what: 'Hearth\'s database (DB_PATH), which holds every session',
      instead: 'Use memory_search for what Hearth remembers.',
      readable: false,
    })),
    { path: at('.env'), folder: false, what: 'Hearth\'s .env, which holds its configuration and secrets', instead: 'Ask the person to change Hearth\'s configuration.', readable: false },
    { path: at(config.SSH_HOSTS_FILE), folder: false, what: 'the SSH hosts file (SSH_HOSTS_FILE), which may hold passwords', instead: 'Ask the person to add or change SSH connections; ssh_exec names the known ones.', readable: false },
  ];
  if (config.PERSONA_FILE !== '') {
    entries.push({ path: at(config.PERSONA_FILE), folder: false, what: 'the persona file (PERSONA_FILE)', instead: 'Ask the person to change the persona.', readable: true });
  }
  const mcpConfig = (config as Partial<Record<string, unknown>>)['MCP_CONFIG_FILE'];
  if (typeof mcpConfig === 'string' && mcpConfig !== '') {
    entries.push({ path: at(mcpConfig), folder: false, what: 'the MCP servers file (MCP_CONFIG_FILE), which names programs Hearth starts', instead: 'Ask the person to change MCP servers.', readable: true });
  }
  // Files first: the most specific message wins (the database is also in DATA_DIR).
  return [...entries.filter((entry) => !entry.folder), ...entries.filter((entry) => entry.folder)];
}

export type ControlAccess = 'read' | 'write';

/**
 * Refuses `target` (a resolved real path) when it is one of Hearth's control paths. The
 * session folders are exempt from a control folder that holds them (DATA_DIR may hold
 * SESSION_FILES_DIR), so sessions keep their own folders.
 */
export function createControlFileGuard(config: Config, workingFolder = process.cwd()) {
  const entries = controlPaths(config, workingFolder);
  const sessionFiles = path.resolve(workingFolder, config.SESSION_FILES_DIR);

  return async function refusal(target: string, access: ControlAccess, shown: string): Promise<string | undefined> {
    const realSessionFiles = await realOrAsGiven(sessionFiles);
    for (const entry of entries) {
      if (access === 'read' && entry.readable) continue;
      const location = await realOrAsGiven(entry.path);
      const hit = entry.folder ? isInside(location, target) && !(isInside(location, realSessionFiles) && isInside(realSessionFiles, target)) : location === target;
      if (!hit) continue;
      const verb = access === 'read' ? 'reads' : 'writes';
      return `Refused: ${shown} is ${entry.what}; the filesystem tool never ${verb} it, whatever FS_ALLOWED_PATHS says. ${entry.instead}`;
    }
    return undefined;
  };
}

async function realOrAsGiven(location: string): Promise<string> {
  return realpathAllowingMissing(location).catch(() => location);
}
