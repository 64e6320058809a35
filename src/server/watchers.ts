import { mkdir } from 'node:fs/promises';
import { existsSync, type Stats } from 'node:fs';
import path from 'node:path';
import { watch, type FSWatcher } from 'chokidar';
import type { Logger } from '../logger.ts';
import type { ProfileRegistry } from '../profiles/profile-registry.ts';
import { switchesFileName, type ToolSwitches } from '../tools/user-tools/tool-switches.ts';
import type { UserToolManager } from '../tools/user-tools/user-tool-manager.ts';

export interface WatcherOptions {
  toolsDir: string;
  /** SHIPPED_TOOLS_DIR: watched when it exists (an upgrade changes it), never created. */
  shippedToolsDir?: string;
  profilesDir: string;
  /** DATA_DIR/profiles: the person's overrides of the shipped profiles. */
  profileOverridesDir?: string;
  userTools: Pick<UserToolManager, 'reload'>;
  /** Read again when enabled.json changes; a switch needs no reload of the tools. */
  toolSwitches?: Pick<ToolSwitches, 'reload'>;
  profiles: Pick<ProfileRegistry, 'reload' | 'errors'>;
  /** Called after each profiles reload that read the folder. */
  onProfilesChanged: () => void;
  logger: Logger;
  /** Quiet time after the last event of a burst before one reload runs. */
  debounceMs?: number;
  /** How long a file's size must hold still before it counts as written. */
  stabilityMs?: number;
}

export interface Watchers {
  close(): Promise<void>;
}

const toolExtensions = new Set(['.ts', '.mts', '.js', '.mjs']);
/** Helpers may sit in sub-folders of TOOLS_DIR; deeper than this is not tool code. */
const toolsDepth = 4;

/**
 * Watches the tool folders and the profile folders and reloads the user tools or the profiles after a
 * change: writes are awaited until the file stops growing, bursts become one reload per
 * folder, and a failed reload is logged while the server keeps serving the last good set.
 */
export async function startWatchers(options: WatcherOptions): Promise<Watchers> {
  const { logger, userTools, profiles } = options;
  const debounceMs = options.debounceMs ?? 50;
  const stabilityMs = options.stabilityMs ?? 50;

  const toolsReload = new DebouncedTask(debounceMs, async () => {
    try {
      const { errors } = await userTools.reload();
      for (const { file, message } of errors) logger.warn({ file }, `user tool not loaded: ${message}`);
    } catch (error) {
      logger.error({ err: error }, 'reloading the user tools failed; the previous tools stay loaded');
    }
  });
  const switchesReload = new DebouncedTask(debounceMs, async () => {
    try {
      await options.toolSwitches?.reload();
    } catch (error) {
      logger.error({ err: error }, 'reading the user tools\' switches failed');
    }
  });
  const profilesReload = new DebouncedTask(debounceMs, async () => {
    try {
      await profiles.reload();
    } catch (error) {
      logger.error({ err: error }, 'reloading the profiles failed; the previous profiles stay loaded');
      return;
    }
    for (const { file, message } of profiles.errors()) logger.warn({ file }, `profile not loaded: ${message}`);
    try {
      options.onProfilesChanged();
    } catch (error) {
      logger.error({ err: error }, 'announcing the profile change failed');
    }
  });

  const shipped = (folder: string | undefined, own: string) => (folder === undefined || path.resolve(folder) === path.resolve(own) ? [] : [folder]);
  const watchers = await Promise.all([
    watchFolder(options.toolsDir, toolsDepth, isToolsFile, (relative) => (relative === switchesFileName ? switchesReload : toolsReload), stabilityMs, logger),
    ...shipped(options.shippedToolsDir, options.toolsDir).map((folder) => watchFolder(folder, toolsDepth, isToolsFile, () => toolsReload, stabilityMs, logger, { create: false })),
    watchFolder(options.profilesDir, 0, isProfileFile, () => profilesReload, stabilityMs, logger, { create: false }),
    ...shipped(options.profileOverridesDir, options.profilesDir).map((folder) => watchFolder(folder, 0, isProfileFile, () => profilesReload, stabilityMs, logger)),
  ]);

  return {
    async close() {
      await Promise.all(watchers.map((watcher) => watcher?.close()));
      await Promise.all([toolsReload.close(), switchesReload.close(), profilesReload.close()]);
    },
  };
}

/** `relative` is the file's path inside TOOLS_DIR. */
function isToolsFile(relative: string): boolean {
  return relative === switchesFileName || toolExtensions.has(path.extname(relative));
}

function isProfileFile(relative: string): boolean {
  return !relative.includes(path.sep) && relative.endsWith('.md');
}

async function watchFolder(
  root: string,
  depth: number,
  isWatchedFile: (relative: string) => boolean,
  /** The task a change of this file (relative to the folder) triggers. */
  reloadFor: (relative: string) => DebouncedTask,
  stabilityMs: number,
  logger: Logger,
  /** Whether a missing folder is made (the person's folders); a shipped one is only read. */
  { create } = { create: true },
): Promise<FSWatcher | undefined> {
  const folder = path.resolve(root);
  try {
    if (create) await mkdir(folder, { recursive: true });
    else if (!existsSync(folder)) return undefined;
  } catch (error) {
    logger.error({ err: error, folder }, 'cannot create the folder; it is not watched');
    return undefined;
  }
  const relativeOf = (file: string) => path.relative(folder, path.resolve(file));
  // Dot entries (.build, .history, .staging, editor swap files) and node_modules are never ours.
  const hidden = (relative: string) => relative.split(path.sep).some((part) => part.startsWith('.') || part === 'node_modules');

  const watcher = watch(folder, {
    ignoreInitial: true,
    depth,
    awaitWriteFinish: { stabilityThreshold: stabilityMs, pollInterval: 10 },
    ignored: (file: string, stats?: Stats) => {
      const relative = relativeOf(file);
      if (relative === '') return false;
      if (hidden(relative)) return true;
      // Without stats chokidar may be asking about a folder; the event handler filters files again.
      return stats?.isFile() === true && !isWatchedFile(relative);
    },
  });
  watcher.on('all', (event, file) => {
    const relative = relativeOf(file);
    if (relative === '' || hidden(relative)) return;
    const fileEvent = event === 'add' || event === 'change' || event === 'unlink';
    if ((fileEvent && isWatchedFile(relative)) || (event === 'unlinkDir' && depth > 0)) reloadFor(relative).trigger();
  });
  watcher.on('error', (error) => logger.error({ err: error, folder }, 'file watcher error'));
  // Files written before the first scan finishes would count as initial and be missed.
  await new Promise<void>((resolve) => watcher.once('ready', resolve));
  return watcher;
}

/** Runs `task` once a burst of triggers has been quiet for `delayMs`; never two at once. */
class DebouncedTask {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private runAgain = false;
  private closed = false;

  constructor(
    private readonly delayMs: number,
    private readonly task: () => Promise<void>,
  ) {}

  trigger(): void {
    if (this.closed) return;
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.start(), this.delayMs);
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.timer);
    while (this.running) await this.running;
  }

  private start(): void {
    this.timer = undefined;
    if (this.running) {
      this.runAgain = true;
      return;
    }
    this.running = this.task().finally(() => {
      this.running = undefined;
      if (this.runAgain && !this.closed) {
        this.runAgain = false;
        this.start();
      }
    });
  }
}
