import type { BigIntStats } from 'node:fs';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Config } from '../../config.ts';
import { hearthFootprint, hearthProcessIds, type FootprintEntry } from '../../jail/hearth-footprint.ts';
import type { ToolContext } from '../tool.ts';
import { isInside, parseAllowedRoots, realpathAllowingMissing, type AllowedRoots } from './path-access.ts';
import { sameIdentity, type Identity } from './pinned-files.ts';
import { runsCodeLater } from './run-later-places.ts';
import { sessionWorkFolder } from './work-folder.ts';

/**
 * The one policy for every tool that touches host files (docs/security.md, "The path policy"):
 * - never, whatever the rules or the person say: Hearth's installation and working folders,
 *   DATA_DIR and SESSION_FILES_DIR apart from the session's own folder, PROFILES_DIR, TOOLS_DIR,
 *   MANUALS_DIR, the config files, and `/proc/<pid>` of Hearth and the processes above it;
 * - other sessions' folders are invisible: reading or listing one answers as for a missing path;
 * - writes land in the session's folder and FS_WRITABLE_PATHS without a question, anywhere else
 *   (within FS_ALLOWED_PATHS) after one; places that run code later always ask.
 * Decided on the real path and on device+inode identities, so `..`, `~`, links, `/proc/self/root`,
 * hard links to a never-file and bind mounts of a never-folder all reach the same decision.
 */
export type FileAction = 'read' | 'list' | 'write' | 'append' | 'mkdir' | 'delete';

export const writingActions: ReadonlySet<FileAction> = new Set(['write', 'append', 'mkdir', 'delete']);

/** An existing part of the decided path: the leaf, or a folder above it. */
export interface Ancestor {
  real: string;
  stats: BigIntStats;
}

export type PathDecision =
  | {
      ok: true;
      /** The real location: links resolved (a deleted link itself: its folder resolved). */
      real: string;
      /** `own`: the session's folder; `writable`: FS_WRITABLE_PATHS; `outside`: anywhere else it may reach. */
      zone: 'own' | 'writable' | 'outside';
      /** The leaf's lstat when it exists. */
      leaf?: BigIntStats;
      /** The nearest existing folder above the leaf (the leaf's own folder when it exists). */
      existingFolder: Ancestor;
      /** Names to create below existingFolder to reach the leaf's folder. */
      missingFolders: string[];
      /** Folders that must not be deleted themselves: the session's folder, allowed and writable roots. */
      isRoot: boolean;
      /** Why the person must be asked first; undefined when nobody needs to be. */
      ask?: string;
    }
  | { ok: false; message: string };

interface Place {
  setting: string;
  real: string;
  identity?: Identity;
}

interface FixedPlaces {
  folders: Place[];
  files: Place[];
  sessions: Place;
  allowed: Place[] | 'anywhere';
  writable: Place[] | 'anywhere';
}

const placesLifetimeMs = 1_000;

const missing = (shown: string) => `${shown} does not exist. Use action "list" on its folder to see what is there.`;

/** What each of Hearth's places is, and what to do instead: after "Refused: <path> is …". */
const neverText: Record<string, { what: string; instead: string }> = {
  installation: { what: 'in Hearth\'s installation folder, whose code runs inside Hearth at every start', instead: 'Ask the person to change Hearth itself.' },
  'working folder': { what: 'in Hearth\'s working folder, where it reads .env and its settings', instead: 'Ask the person to change Hearth\'s configuration.' },
  '.env': { what: 'Hearth\'s .env, which holds its configuration and secrets', instead: 'Ask the person to change Hearth\'s configuration.' },
  DATA_DIR: { what: 'in DATA_DIR, Hearth\'s database and state', instead: 'Hearth\'s state is not for tools; use memory_search for what Hearth remembers.' },
  DB_PATH: { what: 'Hearth\'s database (DB_PATH), which holds every session', instead: 'Use memory_search for what Hearth remembers.' },
  SESSION_FILES_DIR: { what: 'the folder of every session\'s files (SESSION_FILES_DIR)', instead: 'This session\'s own folder is "." (relative paths start there).' },
  PROFILES_DIR: { what: 'in PROFILES_DIR, where the profiles and their approval rules live', instead: 'Ask the person to change the profile.' },
  TOOLS_DIR: { what: 'in TOOLS_DIR, where user tools live', instead: 'Use write_tool to create or change a user tool, and list_tools to see them.' },
  SHIPPED_TOOLS_DIR: { what: 'in SHIPPED_TOOLS_DIR, the user tools shipped with Hearth', instead: 'Use write_tool to create or change a user tool (a tool of the same name replaces a shipped one), and list_tools to see them.' },
  MANUALS_DIR: { what: 'in MANUALS_DIR, Hearth\'s tool manuals', instead: 'Use tool_manual to read a manual; ask the person if one needs changing.' },
  SSH_HOSTS_FILE: { what: 'the SSH hosts file (SSH_HOSTS_FILE), which may hold passwords', instead: 'Ask the person to add or change SSH connections; ssh_exec names the known ones.' },
  'SSH key': { what: 'a private key named in the SSH hosts file', instead: 'ssh_exec uses it for you.' },
  MCP_CONFIG_FILE: { what: 'the MCP servers file (MCP_CONFIG_FILE), which names programs Hearth starts', instead: 'Ask the person to change MCP servers.' },
  PERSONA_FILE: { what: 'the persona file (PERSONA_FILE)', instead: 'Ask the person to change the persona.' },
  process: { what: 'Hearth\'s own process or one above it (/proc), which holds its secrets', instead: 'Nothing there is for tools.' },
};

function refusal(shown: string, setting: string, action: FileAction): string {
  const { what, instead } = neverText[setting] ?? { what: `Hearth's ${setting}`, instead: '' };
  return `Refused: ${shown} is ${what}; no tool may ${action === 'list' ? 'list' : action === 'read' ? 'read' : 'change'} it, whatever the rules or the person say. ${instead}`.trim();
}

const otherSessionRefusal = (shown: string) =>
  `Refused: ${shown} is in Hearth's session-files folder but outside this session's own folder; a session works only in its own folder (relative paths start there).`;

function expandHome(requested: string): string {
  if (requested === '~') return os.homedir();
  if (requested.startsWith('~/')) return path.join(os.homedir(), requested.slice(2));
  return requested;
}

async function statOrUndefined(location: string): Promise<BigIntStats | undefined> {
  return fs.stat(location, { bigint: true }).catch(() => undefined);
}

async function place(setting: string, location: string): Promise<Place> {
  const real = await realpathAllowingMissing(location).catch(() => location);
  const stats = await statOrUndefined(real);
  return { setting, real, ...(stats && { identity: stats }) };
}

/** The existing parts of `real`, leaf first, up to `/` (lstat: `real` has no links, except a deleted link's leaf). */
async function ancestorsOf(real: string): Promise<Ancestor[]> {
  const chain: string[] = [];
  for (let current = real; ; current = path.dirname(current)) {
    chain.push(current);
    if (path.dirname(current) === current) break;
  }
  const stats = await Promise.all(chain.map((entry) => fs.lstat(entry, { bigint: true }).catch(() => undefined)));
  return chain.flatMap((entry, index) => (stats[index] ? [{ real: entry, stats: stats[index]! }] : []));
}

function hearthProcessOf(real: string): boolean {
  const match = /^\/proc\/(\d+)(\/|$)/.exec(real);
  return match !== null && hearthProcessIds().includes(Number(match[1]));
}

const verbs: Record<FileAction, string> = { read: 'reads', list: 'lists', write: 'writes', append: 'appends to', mkdir: 'creates the folder', delete: 'deletes' };

export interface PathPolicyOptions {
  config: Config;
  /** The folder relative settings (DATA_DIR, `.env`…) are resolved from: the server's working folder. */
  workingFolder?: string;
}

export interface PathPolicy {
  /** Decides one call's path; `shown` is the path as the model wrote it, used in messages. */
  decide(requested: string, action: FileAction, context: Pick<ToolContext, 'sessionId' | 'parentSessionId'>): Promise<PathDecision>;
  /**
   * The read grants (FS_ALLOWED_PATHS) a jail may bind: those inside none of Hearth's places.
   * A grant that holds some is bound with them hidden inside it (src/jail/bubblewrap-arguments.ts).
   */
  readGrants(): Promise<AllowedRoots>;
}

export function createPathPolicy(options: PathPolicyOptions): PathPolicy {
  const { config } = options;
  const workingFolder = options.workingFolder ?? process.cwd();
  const allowedRoots = parseAllowedRoots(config.FS_ALLOWED_PATHS);
  const writableRoots = parseAllowedRoots(config.FS_WRITABLE_PATHS);
  // The home's ~/.ssh is a place that runs code later (it asks), not one of Hearth's own.
  const footprint = hearthFootprint(config, workingFolder).filter((entry) => entry.setting !== '~/.ssh' && path.resolve(entry.path) !== '/');
  const sessionFiles = path.resolve(workingFolder, config.SESSION_FILES_DIR);

  async function places(entries: readonly FootprintEntry[]): Promise<Place[]> {
    return Promise.all(entries.map((entry) => place(entry.setting, entry.path)));
  }

  async function rootsOf(roots: AllowedRoots): Promise<Place[] | 'anywhere'> {
    return roots === 'anywhere' ? 'anywhere' : Promise.all(roots.map((root) => place('root', root)));
  }

  /** Hearth's places and the granted roots, resolved at most once a second: they change only when the person moves them. */
  let resolved: { at: number; places: Promise<FixedPlaces> } | undefined;
  function fixedPlaces(): Promise<FixedPlaces> {
    if (resolved === undefined || performance.now() - resolved.at > placesLifetimeMs) {
      const places = resolvePlaces();
      resolved = { at: performance.now(), places };
      places.catch(() => (resolved = undefined));
    }
    return resolved.places;
  }

  async function resolvePlaces(): Promise<FixedPlaces> {
    const [folders, files, sessions, allowed, writable] = await Promise.all([
      places(footprint.filter((entry) => entry.folder && entry.setting !== 'SESSION_FILES_DIR')),
      places(footprint.filter((entry) => !entry.folder)),
      place('SESSION_FILES_DIR', sessionFiles),
      rootsOf(allowedRoots),
      rootsOf(writableRoots),
    ]);
    return { folders, files, sessions, allowed, writable };
  }

  async function decide(requested: string, action: FileAction, context: Pick<ToolContext, 'sessionId' | 'parentSessionId'>): Promise<PathDecision> {
    const shown = requested.trim() === '' ? '.' : requested.trim();
    const workFolder = await realpathAllowingMissing(await sessionWorkFolder(sessionFiles, context));
    const lexical = path.resolve(workFolder, expandHome(shown));
    let real: string;
    try {
      real = action === 'delete' && lexical !== '/'
        ? path.join(await realpathAllowingMissing(path.dirname(lexical)), path.basename(lexical))
        : await realpathAllowingMissing(lexical);
    } catch (error) {
      return { ok: false, message: `Cannot resolve ${shown}: ${(error as Error).message}` };
    }
    const [ancestors, { folders, files, sessions, allowed, writable }, own] = await Promise.all([ancestorsOf(real), fixedPlaces(), place('own', workFolder)]);
    const leaf = ancestors[0]?.real === real ? ancestors[0].stats : undefined;
    const reads = action === 'read' || action === 'list';

    if (hearthProcessOf(real)) return { ok: false, message: refusal(shown, 'process', action) };
    // A file with another name (a hard link made earlier) is still the file it is.
    const file = files.find((entry) => entry.real === real || (leaf !== undefined && !leaf.isDirectory() && sameIdentity(leaf, entry.identity)));
    if (file) return { ok: false, message: refusal(shown, file.setting, action) };
    // The nearest of Hearth's places above decides: the session's own folder inside the
    // installation (./session-files) stays usable, Hearth's folder bound inside it does not.
    for (const [index, ancestor] of ancestors.entries()) {
      const at = (entry: Place) => ancestor.real === entry.real || sameIdentity(ancestor.stats, entry.identity);
      if (at(own)) break;
      if (at(sessions)) {
        if (index === 0 && ancestor.real === real) return { ok: false, message: refusal(shown, 'SESSION_FILES_DIR', action) };
        return { ok: false, message: reads ? missing(shown) : otherSessionRefusal(shown) };
      }
      const folder = folders.find(at);
      if (folder) return { ok: false, message: refusal(shown, folder.setting, action) };
    }

    const inOwn = isInside(workFolder, real) || ancestors.some((ancestor) => sameIdentity(ancestor.stats, own.identity));
    const within = (roots: Place[] | 'anywhere') => roots === 'anywhere' || roots.some((root) => isInside(root.real, real) || ancestors.some((ancestor) => sameIdentity(ancestor.stats, root.identity)));
    const zone = inOwn ? 'own' : within(writable) ? 'writable' : 'outside';
    if (zone === 'outside' && !within(allowed)) {
      const grants = allowedRoots === 'anywhere' ? '' : ` and ${[...allowedRoots, ...(writableRoots === 'anywhere' ? [] : writableRoots)].join(', ')}`;
      const leads = path.isAbsolute(shown) && real === lexical ? '' : ` (it leads to ${real})`;
      return { ok: false, message: `Access to ${shown} is refused${leads}: only the session's folder${grants} may be used.` };
    }

    const existingFolder = ancestors.find((ancestor) => ancestor.real !== real || (leaf?.isDirectory() && action !== 'delete')) ?? ancestors.at(-1)!;
    const leafFolder = leaf?.isDirectory() && action !== 'delete' ? real : path.dirname(real);
    const missingFolders = path.relative(existingFolder.real, leafFolder).split(path.sep).filter((segment) => segment !== '');
    const rootFolders = [workFolder, ...(allowed === 'anywhere' ? [] : allowed.map((root) => root.real)), ...(writable === 'anywhere' ? [] : writable.map((root) => root.real))];
    const isRoot = rootFolders.includes(real) || real === '/';
    return { ok: true, real, zone, ...(leaf && { leaf }), existingFolder, missingFolders, isRoot, ...askAbout(real, zone, action) };
  }

  async function readGrants(): Promise<AllowedRoots> {
    if (allowedRoots === 'anywhere') return 'anywhere';
    // ~/.ssh included: a strict jail shows nothing of it either.
    const hearth = await places(hearthFootprint(config, workingFolder).filter((entry) => path.resolve(entry.path) !== '/'));
    const grants = await Promise.all(allowedRoots.map((root) => place('root', root)));
    return grants.filter((grant) => !hearth.some((entry) => isInside(entry.real, grant.real))).map((grant) => grant.real);
  }

  return { decide, readGrants };
}

/** The question a call needs: places that run code later always, any other write outside the session's folder and FS_WRITABLE_PATHS. */
function askAbout(real: string, zone: 'own' | 'writable' | 'outside', action: FileAction): { ask?: string } {
  const later = runsCodeLater(real);
  const sshKeys = action === 'read' && real.split(path.sep).includes('.ssh');
  if (sshKeys) return { ask: `${verbs[action]} ${real}: .ssh holds the keys that open other machines` };
  if (!writingActions.has(action)) return {};
  if (later !== undefined) return { ask: `${verbs[action]} ${real}: ${later}` };
  if (zone === 'outside') return { ask: `${verbs[action]} ${real}, outside the session's folder` };
  return {};
}
