// Hearth once kept the person's state in its checkout (./data, ./session-files, files it wrote
// into user-tools/, mcp.json, profile edits), where every `git pull` met it. A start from the
// checkout moves what an install of that time left there to where the configuration now puts
// it, once: nothing is moved onto something already there, and every move is reported.
import { execFile } from 'node:child_process';
import { cp, lstat, mkdir, readdir, rename, rm } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { profileOverridesDir, type Config } from './config.ts';
import type { Logger } from './logger.ts';

const run = promisify(execFile);

/** What a migrating start did and what it left, one line each, for the log. */
export interface StateMigrationReport {
  moved: string[];
  /** Found in the checkout but not moved, and why (the place it would go already has one). */
  kept: string[];
  /** Settings that still point into the checkout, so git keeps meeting what Hearth writes there. */
  warnings: string[];
}

/** Folders the tools write into that are caches, rebuilt on demand: never moved. */
const rebuiltFolders = new Set(['.build', '.staging', 'node_modules']);
const databaseSuffixes = ['', '-wal', '-shm', '-journal'];

/**
 * Moves the state an older Hearth kept in `checkout` (its installation folder, where it ran
 * from) to the places `config` names. `checkout` is read with git to tell the files it ships
 * from the person's: without git only ./data, ./session-files, mcp.json and ssh_hosts.json move.
 * With `move` false it only warns of settings that point into the checkout.
 */
export async function moveStateOutOfCheckout(config: Config, checkout: string, { move: moving } = { move: true }): Promise<StateMigrationReport> {
  const report: StateMigrationReport = { moved: [], kept: [], warnings: [] };
  const inCheckout = (name: string) => path.join(checkout, name);
  const target = (setting: string) => path.resolve(checkout, setting);

  for (const [key, value] of Object.entries({ DATA_DIR: config.DATA_DIR, TOOLS_DIR: config.TOOLS_DIR, SESSION_FILES_DIR: config.SESSION_FILES_DIR, MCP_CONFIG_FILE: config.MCP_CONFIG_FILE, SSH_HOSTS_FILE: config.SSH_HOSTS_FILE })) {
    if (isInside(checkout, target(value))) {
      report.warnings.push(
        `${key}=${value} is inside Hearth's installation folder ${checkout}: what Hearth writes there meets git. ` +
          `Remove ${key} from .env (or the environment) to keep it under DATA_DIR (${config.DATA_DIR}); the next start moves what is there.`,
      );
    }
  }

  if (!moving) return report;

  const move = async (from: string, to: string) => {
    if (path.resolve(from) === path.resolve(to) || isInside(from, path.resolve(to)) || !(await exists(from))) return;
    if (await exists(to)) {
      report.kept.push(`${from} (${to} is there already)`);
      return;
    }
    await moveEntry(from, to);
    report.moved.push(`${from} → ${to}`);
  };

  // ./data: the database goes as a whole (a journal beside another database would spoil it), the rest entry by entry.
  const oldData = inCheckout('data');
  const dataDir = target(config.DATA_DIR);
  if (path.resolve(oldData) !== dataDir && (await exists(oldData))) {
    const database = target(config.DB_PATH);
    if (await exists(path.join(oldData, 'hearth.db'))) {
      if (await exists(database)) report.kept.push(`${path.join(oldData, 'hearth.db')} (${database} is there already)`);
      else for (const suffix of databaseSuffixes) await move(path.join(oldData, `hearth.db${suffix}`), `${database}${suffix}`);
    }
    for (const entry of await readdir(oldData)) {
      if (entry === 'jail' || databaseSuffixes.some((suffix) => entry === `hearth.db${suffix}`)) continue;
      await move(path.join(oldData, entry), path.join(dataDir, entry));
    }
  }

  const oldSessionFiles = inCheckout('session-files');
  if (await exists(oldSessionFiles)) {
    for (const entry of await readdir(oldSessionFiles)) {
      if (entry !== '.gitkeep') await move(path.join(oldSessionFiles, entry), path.join(target(config.SESSION_FILES_DIR), entry));
    }
  }
  await move(inCheckout('mcp.json'), target(config.MCP_CONFIG_FILE));
  await move(inCheckout('ssh_hosts.json'), target(config.SSH_HOSTS_FILE));

  const changes = await gitChanges(checkout, ['user-tools', 'profiles']);
  if (changes === undefined) {
    if ((await exists(inCheckout('user-tools'))) || (await exists(inCheckout('profiles')))) {
      report.warnings.push(
        `${checkout} is not a git checkout, so Hearth cannot tell the tools and profiles it ships from yours there: ` +
          `move your own tools to ${config.TOOLS_DIR} and your profile edits to ${profileOverridesDir(config)} by hand.`,
      );
    }
    return report;
  }
  const destinations: Record<string, string> = { 'user-tools': target(config.TOOLS_DIR), profiles: target(profileOverridesDir(config)) };
  for (const change of changes) {
    const [folder, ...rest] = change.path.split('/');
    const destination = destinations[folder!];
    if (destination === undefined || rest.some((part) => rebuiltFolders.has(part))) continue;
    const from = inCheckout(change.path);
    const to = path.join(destination, ...rest);
    if (change.tracked) {
      // A shipped file the person edited: the edit becomes their override, and the checkout gets the shipped file back.
      if (await exists(to)) {
        report.kept.push(`${from}, edited (${to} is there already)`);
        continue;
      }
      await mkdir(path.dirname(to), { recursive: true });
      await cp(from, to, { errorOnExist: true, force: false });
      await run('git', ['-C', checkout, 'checkout', '--', change.path]);
      report.moved.push(`${from} (your edit) → ${to}; the shipped version is back in the checkout`);
    } else {
      await move(from, to);
    }
  }
  return report;
}

/** Files of `folders` git has no committed version of (untracked or ignored), or that differ from it. */
async function gitChanges(checkout: string, folders: string[]): Promise<Array<{ path: string; tracked: boolean }> | undefined> {
  if (!(await exists(path.join(checkout, '.git')))) return undefined;
  let stdout: string;
  try {
    ({ stdout } = await run('git', ['-C', checkout, 'status', '--porcelain=v1', '-z', '--untracked-files=all', '--ignored=traditional', '--no-renames', '--', ...folders], { maxBuffer: 16 * 1024 * 1024 }));
  } catch {
    return undefined;
  }
  return stdout
    .split('\0')
    .filter((entry) => entry.length > 3)
    .flatMap((entry): Array<{ path: string; tracked: boolean }> => {
      const status = entry.slice(0, 2);
      const file = entry.slice(3);
      if (status === '??' || status === '!!') return [{ path: file, tracked: false }];
      // Deleted shipped files stay deleted: nothing of the person's is there to move.
      return status.includes('D') ? [] : [{ path: file, tracked: true }];
    });
}

async function moveEntry(from: string, to: string): Promise<void> {
  await mkdir(path.dirname(to), { recursive: true });
  try {
    await rename(from, to);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EXDEV') throw error;
    // Another file system (DATA_DIR on its own disk): copied, then removed.
    await cp(from, to, { recursive: true, errorOnExist: true, force: false, preserveTimestamps: true, verbatimSymlinks: true });
    await rm(from, { recursive: true, force: true });
  }
}

async function exists(file: string): Promise<boolean> {
  return lstat(file).then(
    () => true,
    () => false,
  );
}

function isInside(folder: string, candidate: string): boolean {
  const relative = path.relative(path.resolve(folder), candidate);
  return relative === '' || (!relative.startsWith('..') && !path.isAbsolute(relative));
}

/** Says what a migrating start moved, what it left and why, and which settings still point into the checkout. */
export function logStateMigration(report: StateMigrationReport, logger: Pick<Logger, 'info' | 'warn'>): void {
  if (report.moved.length > 0) logger.info({ moved: report.moved }, `moved ${report.moved.length} piece(s) of your state out of Hearth's checkout, once: ${report.moved.join('; ')}`);
  if (report.kept.length > 0) logger.warn({ kept: report.kept }, `left in Hearth's checkout, since the place it would move to has one already (compare them and remove the one you do not need): ${report.kept.join('; ')}`);
  for (const warning of report.warnings) logger.warn(warning);
}
