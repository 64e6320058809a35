import { existsSync, readdirSync, readFileSync, realpathSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { profileOverridesDir, userEnvFile, type Config } from '../config.ts';
import { packageRoot } from '../package-root.ts';

/** The folder Hearth is installed in (the one holding `src/`, `node_modules/`, `.env`). */
export const projectFolder = packageRoot;

/** Both spellings of a path: as configured and as links resolve it (a data folder under a linked /tmp has two). */
function spellings(entry: string): string[] {
  const resolved = path.resolve(entry);
  try {
    const real = realpathSync(resolved);
    return real === resolved ? [resolved] : [resolved, real];
  } catch {
    return [resolved];
  }
}

/** Private key files named in the SSH hosts file, which the jail hides with the file itself. */
function sshKeyFiles(hostsFile: string): string[] {
  try {
    const parsed: unknown = JSON.parse(readFileSync(hostsFile, 'utf8'));
    const entries = Array.isArray(parsed) ? parsed : typeof parsed === 'object' && parsed !== null ? Object.values(parsed) : [];
    return entries.flatMap((entry) => {
      const key = (entry as { private_key_path?: unknown; privateKeyPath?: unknown } | null)?.private_key_path ?? (entry as { privateKeyPath?: unknown } | null)?.privateKeyPath;
      return typeof key === 'string' && key !== '' ? [key.replace(/^~(?=$|\/)/, os.homedir())] : [];
    });
  } catch {
    return [];
  }
}

/** One of Hearth's own files or folders, named by the setting (or role) that places it. */
export interface FootprintEntry {
  /** `installation`, `working folder`, `.env`, a config key (`DATA_DIR`, `DB_PATH`…), `SSH key` or `~/.ssh`. */
  setting: string;
  /** Absolute, as configured (links not resolved). */
  path: string;
  folder: boolean;
}

/**
 * Every file and folder of Hearth's: the installation (sources, tool sources, `.env`), the
 * working folder, DATA_DIR (database and its journal files), every session's folder, the documents' originals, profiles
 * (shipped and the person's), the shipped and the person's user tools, manuals, the persona, `mcp.json`, the SSH hosts file and the keys it names, and the user's
 * ~/.ssh. Paths that do not exist yet are listed too, so a file created later is covered as well.
 */
export function hearthFootprint(config: Config, workingFolder = process.cwd()): FootprintEntry[] {
  const at = (entry: string) => path.resolve(workingFolder, entry);
  const dataDir = at(config.DATA_DIR);
  const database = config.DB_PATH === '' ? path.join(dataDir, 'hearth.db') : at(config.DB_PATH);
  const folder = (setting: string, entry: string): FootprintEntry => ({ setting, path: at(entry), folder: true });
  const file = (setting: string, entry: string): FootprintEntry => ({ setting, path: at(entry), folder: false });
  return [
    folder('installation', projectFolder),
    folder('working folder', workingFolder),
    file('.env', path.join(workingFolder, '.env')),
    file('.env', path.join(projectFolder, '.env')),
    file('.env', userEnvFile(process.env)),
    folder('DATA_DIR', dataDir),
    ...['', '-wal', '-shm', '-journal'].map((suffix) => file('DB_PATH', database + suffix)),
    folder('SESSION_FILES_DIR', config.SESSION_FILES_DIR),
    folder('DOCUMENTS_DIR', config.DOCUMENTS_DIR),
    folder('PROFILES_DIR', config.PROFILES_DIR),
    folder('PROFILES_DIR', profileOverridesDir(config)),
    folder('TOOLS_DIR', config.TOOLS_DIR),
    folder('SHIPPED_TOOLS_DIR', config.SHIPPED_TOOLS_DIR),
    folder('MANUALS_DIR', config.MANUALS_DIR),
    file('SSH_HOSTS_FILE', config.SSH_HOSTS_FILE),
    ...sshKeyFiles(at(config.SSH_HOSTS_FILE)).map((key) => file('SSH key', key)),
    file('MCP_CONFIG_FILE', config.MCP_CONFIG_FILE),
    ...(config.PERSONA_FILE === '' ? [] : [file('PERSONA_FILE', config.PERSONA_FILE)]),
    folder('~/.ssh', path.join(os.homedir(), '.ssh')),
  ];
}

/**
 * What of Hearth lives in the temporary folder, which a host jail sees as the host's: tsx's cache
 * of compiled sources (`npm run dev`, the tests) and Node's compile cache when one is set. Its
 * DATA_DIR, session folders and the jail's own /tmp folders (under DATA_DIR) are in the footprint
 * already; pasta's pid folder lives only until pasta serves, before any jail enters its network.
 */
export function hearthTemporaryFiles(environment: NodeJS.ProcessEnv = process.env): string[] {
  const uid = process.getuid?.();
  return [
    ...(uid === undefined ? [] : [path.join(os.tmpdir(), `tsx-${uid}`)]),
    ...(environment.NODE_COMPILE_CACHE ? [path.resolve(environment.NODE_COMPILE_CACHE)] : []),
  ];
}

/** Every path of hearthFootprint and hearthTemporaryFiles in both spellings (as configured and as links resolve it): what no jail may see. */
export function hearthPaths(config: Config, workingFolder = process.cwd()): string[] {
  const entries = [...hearthFootprint(config, workingFolder).map((entry) => entry.path), ...hearthTemporaryFiles()];
  return [...new Set(entries.flatMap((entry) => spellings(entry)))];
}

function parentOf(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) may hold spaces and parentheses: fields after it start past the last ')'.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const parent = Number(fields[1]);
    return Number.isInteger(parent) && parent > 0 ? parent : undefined;
  } catch {
    return undefined;
  }
}

function threadsOf(pid: number): number[] {
  try {
    return readdirSync(`/proc/${pid}/task`).map(Number).filter((tid) => Number.isInteger(tid) && tid > 0);
  } catch {
    return [pid];
  }
}

/**
 * `/proc` entries a host jail must not open: Hearth's own and those of every process above it
 * (npm, a shell, a terminal emulator carry the person's exported variables in their
 * environment), each with all its threads, since `/proc/<thread id>` opens a thread even
 * though the listing does not show it.
 */
export function hearthProcessIds(pid = process.pid): number[] {
  const found: number[] = [];
  for (let current: number | undefined = pid; current !== undefined && current > 0 && !found.includes(current); current = parentOf(current)) {
    found.push(...threadsOf(current));
    if (current === 1) break;
  }
  return [...new Set(found)].filter((id) => existsSync(`/proc/${id}`));
}
