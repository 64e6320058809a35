import type { Dirent } from 'node:fs';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Type, type Static } from '@sinclair/typebox';
import type { Config } from '../../config.ts';
import type { Tool, ToolContext, ToolOutput } from '../tool.ts';
import { createControlFileGuard } from './control-files.ts';
import { parseAllowedRoots, resolveAllowedPath } from '../host-files/path-access.ts';
import { sessionWorkFolder } from '../host-files/work-folder.ts';

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

function failure(output: string): ToolOutput {
  return { output, success: false };
}

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

async function readText(file: string, signal: AbortSignal): Promise<ReadOutcome> {
  const handle = await fs.open(file, 'r');
  try {
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
  } finally {
    await handle.close();
  }
}

async function read(file: string, shown: string, signal: AbortSignal): Promise<ToolOutput> {
  const stats = await fs.stat(file);
  if (stats.isDirectory()) return failure(`${shown} is a folder, not a file. Use action "list" to see its contents.`);
  if (!stats.isFile()) return failure(`${shown} is not a regular file (a device, socket or pipe), so it cannot be read.`);
  if (stats.size === 0) return `${shown} is empty (0 bytes).`;
  const outcome = await readText(file, signal);
  if (outcome.kind === 'binary') {
    return `${shown} is a binary file (${bytes(stats.size)}), not text, so its contents are not shown. Use a tool made for its type, or a terminal command such as \`file\` or \`xxd | head\`, to inspect it.`;
  }
  if (!outcome.truncated) return `Contents of ${shown} (${bytes(stats.size)}):\n${outcome.text}`;
  return (
    `Contents of ${shown} (first ${formatNumber(maximumReadCharacters)} characters of ${bytes(stats.size)}):\n${outcome.text}\n` +
    `… [truncated: the file is longer than ${formatNumber(maximumReadCharacters)} characters; use a terminal command such as grep, tail or sed -n to see other parts]`
  );
}

async function write(file: string, shown: string, content: string | undefined): Promise<ToolOutput> {
  if (content === undefined) return failure(`Send content: the text to write to ${shown}.`);
  const previous = await fs.stat(file).catch(() => undefined);
  if (previous?.isDirectory()) return failure(`${shown} is a folder, not a file; choose a file name inside it.`);
  await fs.mkdir(path.dirname(file), { recursive: true });
  await fs.writeFile(file, content);
  const replaced = previous ? ` (replaced ${bytes(previous.size)})` : ' (new file)';
  return `Wrote ${bytes(Buffer.byteLength(content))} to ${shown}${replaced}.`;
}

async function append(file: string, shown: string, content: string | undefined): Promise<ToolOutput> {
  if (content === undefined || content === '') return failure(`Send content: the text to append to ${shown}.`);
  await fs.mkdir(path.dirname(file), { recursive: true });
  await fs.appendFile(file, content);
  const { size } = await fs.stat(file);
  return `Appended ${bytes(Buffer.byteLength(content))} to ${shown} (now ${bytes(size)}).`;
}

async function describeEntry(folder: string, entry: Dirent): Promise<string> {
  const location = path.join(folder, entry.name);
  if (entry.isSymbolicLink()) return `link  ${entry.name} -> ${await fs.readlink(location).catch(() => '?')}`;
  if (entry.isDirectory()) return `dir   ${entry.name}/`;
  const size = await fs.lstat(location).then((stats) => bytes(stats.size), () => 'size unknown');
  return `${entry.isFile() ? 'file' : 'other'}  ${entry.name}  ${size}`;
}

async function list(folder: string, shown: string, signal: AbortSignal): Promise<ToolOutput> {
  const stats = await fs.stat(folder);
  if (!stats.isDirectory()) return failure(`${shown} is a file, not a folder. Use action "read" to see its contents.`);
  const entries = (await fs.readdir(folder, { withFileTypes: true })).sort((left, right) =>
    left.name < right.name ? -1 : left.name > right.name ? 1 : 0,
  );
  if (entries.length === 0) return `${shown} is an empty folder.`;
  signal.throwIfAborted();
  const lines = await Promise.all(entries.slice(0, maximumListedEntries).map((entry) => describeEntry(folder, entry)));
  const heading = `Contents of ${shown} (${formatNumber(entries.length)} entr${entries.length === 1 ? 'y' : 'ies'}):`;
  const omitted = entries.length - lines.length;
  const note = omitted > 0 ? [`… [${formatNumber(omitted)} more not shown: listing is capped at ${maximumListedEntries} entries; list a subfolder or use a terminal command such as find]`] : [];
  return [heading, ...lines, ...note].join('\n');
}

async function remove(target: string, root: string, shown: string): Promise<ToolOutput> {
  if (target === root) return failure(`${shown} is the work folder or an allowed root folder itself and cannot be deleted.`);
  const stats = await fs.lstat(target);
  if (stats.isSymbolicLink()) {
    await fs.unlink(target);
    return `Deleted the link ${shown} (what it pointed to was not touched).`;
  }
  if (!stats.isDirectory()) {
    await fs.unlink(target);
    return `Deleted file ${shown} (${bytes(stats.size)}).`;
  }
  const count = (await fs.readdir(target)).length;
  if (count > 0) {
    return failure(`${shown} is a folder with ${formatNumber(count)} entr${count === 1 ? 'y' : 'ies'}; only empty folders can be deleted. Delete what is inside first, one entry at a time.`);
  }
  await fs.rmdir(target);
  return `Deleted empty folder ${shown}.`;
}

async function makeFolder(folder: string, shown: string): Promise<ToolOutput> {
  const created = await fs.mkdir(folder, { recursive: true });
  if (created !== undefined) return `Created folder ${shown}.`;
  const stats = await fs.stat(folder);
  return stats.isDirectory() ? `Folder ${shown} already exists; nothing to do.` : failure(`${shown} already exists as a file, so it cannot be a folder.`);
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
  const allowedRoots = parseAllowedRoots(config.FS_ALLOWED_PATHS);
  const controlFileRefusal = createControlFileGuard(config, options.workingFolder);

  async function run(args: FilesystemArguments, context: ToolContext): Promise<ToolOutput> {
    const action: Action = args.action;
    const shown = args.path.trim() === '' ? '.' : args.path.trim();
    const workFolder = await sessionWorkFolder(config.SESSION_FILES_DIR, context);
    const access = await resolveAllowedPath(args.path, { workFolder, allowedRoots, followFinalLink: action !== 'delete' });
    if (!access.ok) return failure(access.message);
    if (action !== 'list') {
      const refused = await controlFileRefusal(access.path, action === 'read' ? 'read' : 'write', shown);
      if (refused !== undefined) return failure(refused);
    }
    context.signal.throwIfAborted();
    try {
      switch (action) {
        case 'read':
          return await read(access.path, shown, context.signal);
        case 'write':
          return await write(access.path, shown, args.content);
        case 'append':
          return await append(access.path, shown, args.content);
        case 'list':
          return await list(access.path, shown, context.signal);
        case 'delete':
          return await remove(access.path, access.root, shown);
        case 'mkdir':
          return await makeFolder(access.path, shown);
        default:
          return failure(`Unknown action "${String(action satisfies never)}"; use one of: ${actions.join(', ')}.`);
      }
    } catch (error) {
      if (context.signal.aborted) throw error;
      return failure(describeError(error, action, shown));
    }
  }

  return {
    name: 'filesystem',
    description: 'Read, write, append, list or delete files; mkdir. Relative paths are in the session work folder.',
    parameters,
    subject: (args) => `${args.action} ${subjectPath(args.path, config.SESSION_FILES_DIR)}`,
    execute: run,
  };
}
