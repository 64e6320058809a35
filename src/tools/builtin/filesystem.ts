import type { Dirent } from 'node:fs';
import fs, { type FileHandle } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Type, type Static } from '@sinclair/typebox';
import type { Config } from '../../config.ts';
import type { Tool, ToolContext, ToolOutput } from '../tool.ts';
import { createPathPolicy, writingActions, type PathDecision } from '../host-files/path-policy.ts';
import { appendFlags, ChangedWhileChecked, createFlags, inside, openFolderInside, openInside, openPinned, openPinnedFolder, readFlags, sameIdentity, writeFlags } from '../host-files/pinned-files.ts';
import { toolFailure } from '../../failure.ts';

const actions = ['read', 'write', 'append', 'list', 'delete', 'mkdir'] as const;
type Action = (typeof actions)[number];

const maximumReadCharacters = 100_000;
const readChunkBytes = 64 * 1024;
const maximumListedEntries = 200;

const parameters = Type.Object(
  {
    action: Type.Unsafe<Action>({ type: 'string', enum: [...actions] }),
    path: Type.String({ description: 'Relative or absolute' }),
    content: Type.Optional(Type.String({ description: 'Text for write/append' })),
  },
  { additionalProperties: false },
);

type FilesystemArguments = Static<typeof parameters>;

const formatNumber = (value: number) => value.toLocaleString('en-US');
const bytes = (count: number) => `${formatNumber(count)} byte${count === 1 ? '' : 's'}`;

/** Turns the errors the model can act on into a sentence naming the path; anything else keeps its own message. */
function describeError(error: unknown, action: Action, shown: string): string {
  const code = (error as NodeJS.ErrnoException).code;
  switch (code) {
    case 'ENOENT':
      return `${shown} does not exist. Use action "list" on its folder to see what is there.`;
    case 'EISDIR':
      return `${shown} is a folder, not a file. Use action "list" to see its contents.`;
    case 'ENOTDIR':
      return `Part of ${shown} is a file, not a folder.`;
    case 'EEXIST':
      return `${shown} already exists as a file, so it cannot be a folder.`;
    case 'EACCES':
    case 'EPERM':
      return `Permission denied: the server may not ${action} ${shown}.`;
    case 'ENOSPC':
      return `No space left on the disk while writing ${shown}.`;
    case 'ELOOP':
      return `${shown} is a loop of symbolic links.`;
    default:
      return `Could not ${action} ${shown}: ${(error as Error).message}`;
  }
}

type ReadOutcome = { kind: 'text'; text: string; truncated: boolean } | { kind: 'binary' };

async function readText(handle: FileHandle, signal: AbortSignal): Promise<ReadOutcome> {
  const decoder = new TextDecoder('utf-8');
  const buffer = Buffer.alloc(readChunkBytes);
  let text = '';
  while (text.length <= maximumReadCharacters) {
    signal.throwIfAborted();
    const { bytesRead } = await handle.read(buffer, 0, readChunkBytes, null);
    if (bytesRead === 0) return { kind: 'text', text: text + decoder.decode(), truncated: false };
    const chunk = buffer.subarray(0, bytesRead);
    if (chunk.includes(0)) return { kind: 'binary' };
    text += decoder.decode(chunk, { stream: true });
  }
  return { kind: 'text', text: text.slice(0, maximumReadCharacters), truncated: true };
}

type Decided = Extract<PathDecision, { ok: true }>;

/** Runs `work` with the descriptor, closing it whatever happens. */
async function using<Result>(opening: Promise<FileHandle>, work: (handle: FileHandle) => Promise<Result>): Promise<Result> {
  const handle = await opening;
  try {
    return await work(handle);
  } finally {
    await handle.close();
  }
}

const enoent = () => Object.assign(new Error('no such file'), { code: 'ENOENT' });

async function read(decided: Decided, shown: string, signal: AbortSignal): Promise<ToolOutput> {
  const { leaf } = decided;
  if (leaf === undefined) throw enoent();
  if (leaf.isDirectory()) return toolFailure(`${shown} is a folder, not a file. Use action "list" to see its contents.`);
  if (!leaf.isFile()) return toolFailure(`${shown} is not a regular file (a device, socket or pipe), so it cannot be read.`);
  return using(openPinned(decided.real, readFlags, leaf), async (handle) => {
    const size = Number(leaf.size);
    if (size === 0) return `${shown} is empty (0 bytes).`;
    const outcome = await readText(handle, signal);
    if (outcome.kind === 'binary') {
      return `${shown} is a binary file (${bytes(size)}), not text, so its contents are not shown. Use a tool made for its type, or a terminal command such as \`file\` or \`xxd | head\`, to inspect it.`;
    }
    if (!outcome.truncated) return `Contents of ${shown} (${bytes(size)}):\n${outcome.text}`;
    return (
      `Contents of ${shown} (first ${formatNumber(maximumReadCharacters)} characters of ${bytes(size)}):\n${outcome.text}\n` +
      `… [truncated: the file is longer than ${formatNumber(maximumReadCharacters)} characters; use a terminal command such as grep, tail or sed -n to see other parts]`
    );
  });
}

/** Opens the leaf's folder, creating the missing folders on the way inside pinned ones; gives it with its real path. */
async function openLeafFolder(decided: Decided): Promise<{ folder: FileHandle; real: string }> {
  let real = decided.existingFolder.real;
  let folder = await openPinnedFolder(real, decided.existingFolder.stats);
  for (const name of decided.missingFolders) {
    try {
      await fs.mkdir(inside(folder, name)).catch((error: NodeJS.ErrnoException) => {
        if (error.code !== 'EEXIST') throw error;
      });
      const next = await openFolderInside(folder, real, name);
      await folder.close();
      folder = next;
      real = path.join(real, name);
    } catch (error) {
      await folder.close();
      throw error;
    }
  }
  return { folder, real };
}

/** A file with several names could be one of Hearth's own under another name: never written. */
function severalNames(decided: Decided, shown: string): ToolOutput | undefined {
  const links = decided.leaf?.isFile() ? Number(decided.leaf.nlink) : 1;
  if (links <= 1) return undefined;
  return toolFailure(`Refused: ${shown} is a file with ${links} names (hard links); the filesystem tool does not change such a file, since another of its names may be a file no tool may change.`);
}

/**
 * Writes (replacing) or appends to the decided file, creating it and its folders when missing;
 * gives its size before (none for a new file) and after.
 */
async function store(decided: Decided, content: string, mode: 'write' | 'append'): Promise<{ previous?: number; now: number }> {
  const { leaf } = decided;
  const fill = async (handle: FileHandle) => {
    if (mode === 'write' && leaf !== undefined) await handle.truncate(0);
    await handle.writeFile(content);
    return (await handle.stat()).size;
  };
  if (leaf !== undefined) {
    const now = await using(openPinned(decided.real, mode === 'append' ? appendFlags : writeFlags, leaf), fill);
    return { previous: Number(leaf.size), now };
  }
  const { folder, real } = await openLeafFolder(decided);
  try {
    return { now: await using(openInside(folder, real, path.basename(decided.real), createFlags), fill) };
  } finally {
    await folder.close();
  }
}

async function write(decided: Decided, shown: string, content: string | undefined): Promise<ToolOutput> {
  if (content === undefined) return toolFailure(`Send content: the text to write to ${shown}.`);
  if (decided.leaf?.isDirectory()) return toolFailure(`${shown} is a folder, not a file; choose a file name inside it.`);
  if (decided.leaf !== undefined && !decided.leaf.isFile()) return toolFailure(`${shown} is not a regular file (a device, socket or pipe), so it is not written.`);
  const refused = severalNames(decided, shown);
  if (refused) return refused;
  const { previous } = await store(decided, content, 'write');
  const replaced = previous !== undefined ? ` (replaced ${bytes(previous)})` : ' (new file)';
  return `Wrote ${bytes(Buffer.byteLength(content))} to ${shown}${replaced}.`;
}

async function append(decided: Decided, shown: string, content: string | undefined): Promise<ToolOutput> {
  if (content === undefined || content === '') return toolFailure(`Send content: the text to append to ${shown}.`);
  if (decided.leaf?.isDirectory()) throw Object.assign(new Error('is a folder'), { code: 'EISDIR' });
  if (decided.leaf !== undefined && !decided.leaf.isFile()) return toolFailure(`${shown} is not a regular file (a device, socket or pipe), so it is not written.`);
  const refused = severalNames(decided, shown);
  if (refused) return refused;
  const { now } = await store(decided, content, 'append');
  return `Appended ${bytes(Buffer.byteLength(content))} to ${shown} (now ${bytes(now)}).`;
}

async function describeEntry(folder: FileHandle, entry: Dirent): Promise<string> {
  const location = inside(folder, entry.name);
  if (entry.isSymbolicLink()) return `link  ${entry.name} -> ${await fs.readlink(location).catch(() => '?')}`;
  if (entry.isDirectory()) return `dir   ${entry.name}/`;
  const size = await fs.lstat(location).then((stats) => bytes(stats.size), () => 'size unknown');
  return `${entry.isFile() ? 'file' : 'other'}  ${entry.name}  ${size}`;
}

async function list(decided: Decided, shown: string, signal: AbortSignal): Promise<ToolOutput> {
  if (decided.leaf === undefined) throw enoent();
  if (!decided.leaf.isDirectory()) return toolFailure(`${shown} is a file, not a folder. Use action "read" to see its contents.`);
  return using(openPinnedFolder(decided.real, decided.leaf), async (folder) => {
    const entries = (await fs.readdir(`/proc/self/fd/${folder.fd}`, { withFileTypes: true })).sort((left, right) =>
      left.name < right.name ? -1 : left.name > right.name ? 1 : 0,
    );
    if (entries.length === 0) return `${shown} is an empty folder.`;
    signal.throwIfAborted();
    const lines = await Promise.all(entries.slice(0, maximumListedEntries).map((entry) => describeEntry(folder, entry)));
    const heading = `Contents of ${shown} (${formatNumber(entries.length)} entr${entries.length === 1 ? 'y' : 'ies'}):`;
    const omitted = entries.length - lines.length;
    const note = omitted > 0 ? [`… [${formatNumber(omitted)} more not shown: listing is capped at ${maximumListedEntries} entries; list a subfolder or use a terminal command such as find]`] : [];
    return [heading, ...lines, ...note].join('\n');
  });
}

async function remove(decided: Decided, shown: string): Promise<ToolOutput> {
  if (decided.isRoot) return toolFailure(`${shown} is the work folder or an allowed root folder itself and cannot be deleted.`);
  const { leaf } = decided;
  if (leaf === undefined) throw enoent();
  const name = path.basename(decided.real);
  return using(openPinnedFolder(decided.existingFolder.real, decided.existingFolder.stats), async (folder) => {
    const location = inside(folder, name);
    if (!sameIdentity(await fs.lstat(location, { bigint: true }), leaf)) throw new ChangedWhileChecked(decided.real);
    if (leaf.isSymbolicLink()) {
      await fs.unlink(location);
      return `Deleted the link ${shown} (what it pointed to was not touched).`;
    }
    if (!leaf.isDirectory()) {
      await fs.unlink(location);
      return `Deleted file ${shown} (${bytes(Number(leaf.size))}).`;
    }
    const count = (await fs.readdir(location)).length;
    if (count > 0) {
      return toolFailure(`${shown} is a folder with ${formatNumber(count)} entr${count === 1 ? 'y' : 'ies'}; only empty folders can be deleted. Delete what is inside first, one entry at a time.`);
    }
    await fs.rmdir(location);
    return `Deleted empty folder ${shown}.`;
  });
}

async function makeFolder(decided: Decided, shown: string): Promise<ToolOutput> {
  if (decided.leaf !== undefined) {
    return decided.leaf.isDirectory() ? `Folder ${shown} already exists; nothing to do.` : toolFailure(`${shown} already exists as a file, so it cannot be a folder.`);
  }
  const { folder } = await openLeafFolder(decided);
  try {
    await fs.mkdir(inside(folder, path.basename(decided.real)));
  } finally {
    await folder.close();
  }
  return `Created folder ${shown}.`;
}

/**
 * The path as approval rules see it: absolute paths (and `~`) resolved, relative ones
 * normalised and kept relative to the session's work folder, unless they climb out of it,
 * in which case they are shown where they land (which does not depend on the session).
 */
export function subjectPath(requested: string, sessionFilesDir: string): string {
  const trimmed = requested.trim() === '' ? '.' : requested.trim();
  const expanded = trimmed === '~' || trimmed.startsWith('~/') ? path.join(os.homedir(), trimmed.slice(1)) : trimmed;
  if (path.isAbsolute(expanded)) return path.resolve(expanded);
  const normalised = path.normalize(expanded);
  if (normalised !== '..' && !normalised.startsWith(`..${path.sep}`)) return normalised;
  return path.resolve(sessionFilesDir, 'session', normalised);
}

export interface FilesystemOptions {
  config: Config;
  /** The folder relative settings (DATA_DIR, `.env`…) are resolved from: the server's working folder. */
  workingFolder?: string;
}

export function createFilesystemTool(options: FilesystemOptions): Tool<FilesystemArguments> {
  const { config } = options;
  const policy = createPathPolicy(options);
  // precheck and mustAsk decide on the same call one after the other: one decision serves both.
  const early = new WeakMap<object, Promise<PathDecision>>();
  const decideEarly = (args: FilesystemArguments, context: ToolContext) => {
    let decision = early.get(args);
    if (decision === undefined) early.set(args, (decision = policy.decide(args.path, args.action, context)));
    return decision;
  };

  async function run(args: FilesystemArguments, context: ToolContext): Promise<ToolOutput> {
    const action: Action = args.action;
    const shown = args.path.trim() === '' ? '.' : args.path.trim();
    // Decided again: the person may have taken minutes to answer.
    const decided = await policy.decide(args.path, action, context);
    if (!decided.ok) return toolFailure(decided.message);
    context.signal.throwIfAborted();
    try {
      switch (action) {
        case 'read':
          return await read(decided, shown, context.signal);
        case 'write':
          return await write(decided, shown, args.content);
        case 'append':
          return await append(decided, shown, args.content);
        case 'list':
          return await list(decided, shown, context.signal);
        case 'delete':
          return await remove(decided, shown);
        case 'mkdir':
          return await makeFolder(decided, shown);
        default:
          return toolFailure(`Unknown action "${String(action satisfies never)}"; use one of: ${actions.join(', ')}.`);
      }
    } catch (error) {
      if (context.signal.aborted) throw error;
      if (error instanceof ChangedWhileChecked) return toolFailure(`Refused: ${shown} changed while it was being checked (a link or another file took its place); nothing was done.`);
      return toolFailure(describeError(error, action, shown));
    }
  }

  return {
    name: 'filesystem',
    description: 'Read, write, append, list or delete files; mkdir. Relative paths are in the session work folder.',
    parameters,
    subject: (args) => `${args.action} ${subjectPath(args.path, config.SESSION_FILES_DIR)}`,
    async precheck(args, context) {
      const decided = await decideEarly(args, context);
      return decided.ok ? undefined : decided.message;
    },
    async mustAsk(args, context) {
      if (context === undefined) return writingActions.has(args.action) ? `${args.action} ${args.path}: where it lands is not known yet` : undefined;
      const decided = await decideEarly(args, context);
      return decided.ok ? decided.ask : undefined;
    },
    execute: run,
  };
}
