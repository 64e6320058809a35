import { createHash } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import type { Message } from 'esbuild';
import type { LoadFailure, ModuleToLoad } from './protocol.ts';
import { switchesFileName } from './tool-switches.ts';

const toolExtensions = new Set(['.ts', '.mts', '.js', '.mjs']);

/** Tool files in a folder: `.ts`, `.mts`, `.js`, `.mjs`, except names starting with `_` or `.`. */
async function toolFilesIn(folder: string): Promise<string[]> {
  let entries;
  try {
    entries = await readdir(folder, { withFileTypes: true });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw error;
  }
  return entries
    .filter((entry) => entry.isFile() && !/^[_.]/.test(entry.name) && toolExtensions.has(path.extname(entry.name)))
    .map((entry) => path.join(folder, entry.name));
}

/**
 * The tool files to load: TOOLS_DIR's, and those of SHIPPED_TOOLS_DIR (the examples that come
 * with Hearth) whose tool TOOLS_DIR does not hold under any extension: the person's file wins.
 */
export async function listToolFiles(toolsDir: string, shippedToolsDir?: string): Promise<string[]> {
  const own = await toolFilesIn(toolsDir);
  const ownNames = new Set(own.map(toolNameOf));
  const shipped = shippedToolsDir === undefined || path.resolve(shippedToolsDir) === path.resolve(toolsDir) ? [] : await toolFilesIn(shippedToolsDir);
  return [...own, ...shipped.filter((file) => !ownNames.has(toolNameOf(file)))].sort((first, second) => byCodeUnits(toolNameOf(first), toolNameOf(second)) || byCodeUnits(first, second));
}

/**
 * Not localeCompare: its first call loads ICU's collation data, about 3 MB of memory for the
 * life of the process, at every start (docs/architecture.md, "Idle memory").
 */
function byCodeUnits(first: string, second: string): number {
  return first < second ? -1 : first > second ? 1 : 0;
}

export function toolNameOf(file: string): string {
  return path.basename(file, path.extname(file));
}

/**
 * Bundles one tool with the helper modules it imports into a single ES module, so each
 * host generation loads fresh copies of them; packages and Node built-ins stay imports.
 */
async function bundle(options: { entry: string } | { code: string; name: string; resolveDir: string }, outfile: string) {
  const input =
    'entry' in options
      ? { entryPoints: [options.entry] }
      : { stdin: { contents: options.code, resolveDir: options.resolveDir, sourcefile: `${options.name}.ts`, loader: 'ts' as const } };
  try {
    // esbuild's API is loaded when the first tool is built, not with the server.
    const { build } = await import('esbuild');
    await build({
      ...input,
      outfile,
      bundle: true,
      platform: 'node',
      format: 'esm',
      target: 'node20',
      packages: 'external',
      sourcemap: 'inline',
      logLevel: 'silent',
    });
    return { ok: true as const };
  } catch (error) {
    const errors = (error as { errors?: Message[] }).errors;
    return { ok: false as const, message: errors?.length ? errors.map(describeMessage).join('\n') : String(error) };
  }
}

function describeMessage(message: Message): string {
  const where = message.location ? `line ${message.location.line}, column ${message.location.column + 1}: ` : '';
  const excerpt = message.location?.lineText ? `\n    ${message.location.lineText.trim()}` : '';
  return `${where}${message.text}${excerpt}`;
}

/** Bundles every tool file into `outDir`; a file that does not compile is reported, never hides the others. */
export async function buildToolFiles(files: readonly string[], outDir: string): Promise<{ modules: ModuleToLoad[]; errors: LoadFailure[] }> {
  const built = await Promise.all(
    files.map(async (file) => {
      const modulePath = path.join(outDir, `${toolNameOf(file)}.mjs`);
      return { file, modulePath, result: await bundle({ entry: file }, modulePath) };
    }),
  );
  return {
    modules: built.filter(({ result }) => result.ok).map(({ file, modulePath }) => ({ file, modulePath, expectedName: toolNameOf(file) })),
    errors: built.flatMap(({ file, result }) => (result.ok ? [] : [{ file, message: `Does not compile: ${result.message}` }])),
  };
}

/** Bundles source text that is not installed yet (write_tool), resolving its imports from TOOLS_DIR. */
export async function buildToolSource(name: string, code: string, toolsDir: string, outDir: string) {
  const modulePath = path.join(outDir, `${name}.mjs`);
  const result = await bundle({ code, name, resolveDir: toolsDir }, modulePath);
  return result.ok ? { ok: true as const, module: { file: `${name}.ts`, modulePath, expectedName: name } } : result;
}

/**
 * A digest of everything in the tool folders a load depends on (tool files, helpers in any
 * folder, permissions.json), skipping dot entries: equal digests mean a reload would load the same.
 */
export async function fingerprintToolsDir(toolsDir: string, shippedToolsDir?: string): Promise<string> {
  const own = await fingerprintFolder(toolsDir);
  return shippedToolsDir === undefined ? own : `${own}:${await fingerprintFolder(shippedToolsDir)}`;
}

async function fingerprintFolder(toolsDir: string): Promise<string> {
  const hash = createHash('sha256');
  let entries;
  try {
    entries = await readdir(toolsDir, { recursive: true, withFileTypes: true });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return 'missing';
    throw error;
  }
  const files = entries
    .filter((entry) => entry.isFile())
    .map((entry) => path.join(entry.parentPath, entry.name))
    .filter((file) => !path.relative(toolsDir, file).split(path.sep).some((part) => part.startsWith('.') || part === 'node_modules'))
    // The switches apply without a reload (ToolSwitches).
    .filter((file) => path.relative(toolsDir, file) !== switchesFileName)
    .sort();
  for (const file of files) {
    const content = await readFile(file).catch(() => Buffer.alloc(0));
    hash.update(`${path.relative(toolsDir, file)}\0${content.length}\0`).update(content);
  }
  return hash.digest('hex');
}
