import type { Stats } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { watch, type FSWatcher } from 'chokidar';
import { writeFileAtomically } from '../atomic-file.ts';
import { messageOf } from '../failure.ts';
import type { Logger } from '../logger.ts';
import type { Caller, Person } from '../people/person.ts';
import type { DocumentLibrary } from './document-types.ts';

export interface WatchedFolderOptions {
  /** DOCUMENTS_WATCH_DIR: read, never written. */
  folder: string;
  library: Pick<DocumentLibrary, 'add' | 'delete'>;
  /** The household's owner: the folder's documents go to the household library as added by them. */
  owner(): Promise<Person>;
  /** Where the files already added are remembered (path, size, time, document), so a restart adds only what changed. */
  stateFile: string;
  logger: Logger;
  /** Files larger than this are left out unread (the library's own limit, the upload limit). */
  maxBytes?: number;
  /** How long a file's size must hold still before it counts as written. */
  stabilityMs?: number;
}

/** What is remembered of each file added: its size and time when read, and the document it became (null when refused). */
interface KnownFile {
  size: number;
  mtimeMs: number;
  documentId: string | null;
}

const readExtensions = new Set(['.pdf', '.docx', '.html', '.htm', '.xhtml', '.md', '.markdown', '.txt', '.text', '.eml']);
/** Sub-folders are read this deep (a folder per year, per room). */
const depth = 8;

/**
 * DOCUMENTS_WATCH_DIR: a new or changed file there is added to the household library as the
 * owner's (`source: 'folder'`, named by its path in the folder), a changed one replacing its
 * earlier document, and a removed one is deleted from the library. Files in the documents'
 * formats only; dot files and folders are left out. One change is handled at a time.
 * Shaped as a service of the app's ServiceList (name, start, stop).
 */
export class WatchedFolder {
  readonly name = 'documents watched folder';
  private watcher: FSWatcher | undefined;
  private known: Record<string, KnownFile> = {};
  private queue: Promise<void> = Promise.resolve();
  private stopped = false;

  constructor(private readonly options: WatchedFolderOptions) {}

  /** Reads what was added before, then the folder: what changed while Hearth was not running is handled first. */
  async start(): Promise<void> {
    this.known = await this.readState();
    const folder = path.resolve(this.options.folder);
    const found = await stat(folder).catch(() => undefined);
    if (this.stopped) return;
    if (!found?.isDirectory()) {
      // Not there (a drive not mounted yet): what it held stays in the library rather than being taken for removed.
      this.options.logger.warn({ folder }, 'documents watched folder: DOCUMENTS_WATCH_DIR is not a folder; nothing is watched until Hearth starts with it there');
      return;
    }
    const seen = new Set<string>();
    const watcher = watch(folder, {
      ignoreInitial: false,
      depth,
      awaitWriteFinish: { stabilityThreshold: this.options.stabilityMs ?? 500, pollInterval: 50 },
      ignored: (file: string, stats?: Stats) => {
        const relative = path.relative(folder, file);
        if (relative === '') return false;
        if (relative.split(path.sep).some((part) => part.startsWith('.'))) return true;
        return stats?.isFile() === true && !readExtensions.has(path.extname(file).toLowerCase());
      },
    });
    this.watcher = watcher;
    let ready = false;
    watcher.on('all', (event, file) => {
      const relative = path.relative(folder, file).split(path.sep).join('/');
      if (relative === '' || relative.startsWith('..') || !readExtensions.has(path.extname(file).toLowerCase())) return;
      if (event === 'add' || event === 'change') {
        if (!ready) seen.add(relative);
        this.enqueue(() => this.fileChanged(file, relative));
      } else if (event === 'unlink') {
        this.enqueue(() => this.fileRemoved(relative));
      }
    });
    watcher.on('error', (error) => this.options.logger.error({ err: error, folder }, 'documents watched folder: watcher error'));
    await new Promise<void>((resolve) => watcher.once('ready', resolve));
    ready = true;
    // Files added before and gone since Hearth last ran.
    for (const relative of Object.keys(this.known)) {
      if (!seen.has(relative)) this.enqueue(() => this.fileRemoved(relative));
    }
    await this.queue;
  }

  /** Resolves once every change seen so far has been handled. */
  idle(): Promise<void> {
    return this.queue;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.watcher?.close();
    this.watcher = undefined;
    await this.queue;
  }

  private enqueue(task: () => Promise<void>): void {
    this.queue = this.queue.then(async () => {
      if (this.stopped) return;
      try {
        await task();
      } catch (error) {
        this.options.logger.error({ err: error }, 'documents watched folder: a change was not handled');
      }
    });
  }

  private async fileChanged(file: string, relative: string): Promise<void> {
    let stats: Stats;
    try {
      stats = await stat(file);
    } catch {
      return; // gone again before it was read; its unlink follows
    }
    const before = this.known[relative];
    if (before && before.size === stats.size && before.mtimeMs === stats.mtimeMs) return;
    const { logger, maxBytes } = this.options;
    let documentId: string | null = null;
    if (maxBytes !== undefined && stats.size > maxBytes) {
      logger.warn({ file: relative, size: stats.size }, 'documents watched folder: the file is larger than the upload limit and is left out');
    } else {
      const added = await this.options.library.add({ caller: await this.ownerCaller(), library: 'household', name: relative, content: await readFile(file), source: 'folder' });
      if (added.ok) documentId = added.document.id;
      else logger.warn({ file: relative, code: added.code }, `documents watched folder: not added: ${added.message}`);
    }
    // The new document is in before the old one goes, so the file is never missing from search.
    if (before?.documentId) await this.options.library.delete(await this.ownerCaller(), before.documentId);
    this.known[relative] = { size: stats.size, mtimeMs: stats.mtimeMs, documentId };
    await this.writeState();
  }

  private async fileRemoved(relative: string): Promise<void> {
    const before = this.known[relative];
    if (before === undefined) return;
    if (before.documentId !== null) await this.options.library.delete(await this.ownerCaller(), before.documentId);
    delete this.known[relative];
    await this.writeState();
  }

  /**
   * The owner, as if by the AUTH_TOKEN: whoever chose DOCUMENTS_WATCH_DIR holds the server's
   * configuration, as the token's holder does.
   */
  private async ownerCaller(): Promise<Caller> {
    return { person: await this.options.owner(), via: 'auth_token' };
  }

  private async readState(): Promise<Record<string, KnownFile>> {
    let text: string;
    try {
      text = await readFile(this.options.stateFile, 'utf8');
    } catch {
      return {};
    }
    try {
      const parsed = JSON.parse(text) as { folder?: string; files?: Record<string, KnownFile> };
      // Remembered for another folder (DOCUMENTS_WATCH_DIR changed): its documents stay in the library, for a person to delete.
      return parsed.folder === path.resolve(this.options.folder) ? (parsed.files ?? {}) : {};
    } catch (error) {
      this.options.logger.warn({ file: this.options.stateFile }, `documents watched folder: its state is unreadable (${messageOf(error)}); the folder is read again`);
      return {};
    }
  }

  private async writeState(): Promise<void> {
    await writeFileAtomically(this.options.stateFile, `${JSON.stringify({ folder: path.resolve(this.options.folder), files: this.known }, null, 2)}\n`);
  }
}
