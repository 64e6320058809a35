import { createHash } from 'node:crypto';
import { readdir, realpath, stat } from 'node:fs/promises';
import path from 'node:path';
import type { BuildFailure, Message } from 'esbuild';

/** The page's modules as one file, or why esbuild could not make it. */
export type PageBundle =
  | { ok: true; code: Buffer; map: Buffer; etag: string; lastModified: Date }
  | {
      ok: false;
      /** esbuild's errors, one a line: `file:line:column: ERROR: text`, the file relative to the folder. */
      message: string;
      /** The same with the lines of code they point at, for the log. */
      details: string;
    };

interface FolderState {
  /** Every file's name, size and modification time: what a cached bundle was built from. */
  key: string;
  newest: Date;
}

/**
 * At module level, so the many apps one process builds (tests) bundle once; each entry is
 * rebuilt when a file of its folder changes, so an edit shows on the next reload.
 */
const bundles = new Map<string, { key: string; bundle: Promise<PageBundle> }>();

/** The bundle of `entry` in `folder` (its imports of `/vendor/*` kept), built on first call and again after a file changes. */
export async function pageBundle(folder: string, entry: string): Promise<PageBundle> {
  const entryFile = path.join(folder, entry);
  const state = await folderState(folder);
  const cached = bundles.get(entryFile);
  if (cached?.key === state.key) return cached.bundle;
  const bundle = buildBundle(folder, entry, state.newest).catch((error: unknown) => {
    // A bug rather than a module's mistake (esbuild's own failures are answered as data): forgotten, so the next call tries again.
    if (bundles.get(entryFile)?.bundle === bundle) bundles.delete(entryFile);
    throw error;
  });
  bundles.set(entryFile, { key: state.key, bundle });
  return bundle;
}

async function folderState(folder: string): Promise<FolderState> {
  const names = (await readdir(folder, { recursive: true })).sort();
  const stats = await Promise.all(names.map((name) => stat(path.join(folder, name))));
  const files = stats.map((stats, index) => ({ name: names[index]!, stats })).filter(({ stats }) => stats.isFile());
  return {
    key: files.map(({ name, stats }) => `${name}\t${stats.size}\t${stats.mtimeMs}`).join('\n'),
    newest: new Date(Math.max(0, ...files.map(({ stats }) => stats.mtimeMs))),
  };
}

async function buildBundle(folder: string, entry: string, newest: Date): Promise<PageBundle> {
  // esbuild is loaded on the first request for the page, not with the server.
  const { build, formatMessages } = await import('esbuild');
  // esbuild reads a folder reached through a symbolic link (a test build's public/) at its real place, and places the map's sources from there.
  const realFolder = await realpath(folder);
  const outputFile = path.join(realFolder, entry);
  let outputFiles;
  try {
    ({ outputFiles } = await build({
      entryPoints: [outputFile],
      absWorkingDir: realFolder,
      bundle: true,
      format: 'esm',
      platform: 'browser',
      // The libraries keep their own URLs (src/server/vendor-routes.ts), cached a day apart from the page.
      external: ['/vendor/*'],
      // Never written (write: false): the name places the bundle where the modules are, so the map's sources are their own URLs.
      outfile: outputFile,
      allowOverwrite: true,
      write: false,
      sourcemap: 'linked',
      charset: 'utf8',
      // A third fewer bytes for a phone on a slow link (210 → 154 KB); names are kept, so a page error's stack still reads.
      minifyWhitespace: true,
      minifySyntax: true,
      logLevel: 'silent',
    }));
  } catch (error) {
    if (!isBuildFailure(error)) throw error;
    const framed = await formatMessages(error.errors, { kind: 'error', color: false });
    return { ok: false, message: error.errors.map(oneLine).join('\n'), details: framed.join('').trim() };
  }
  const code = outputFiles.find((file) => file.path === outputFile);
  const map = outputFiles.find((file) => file.path === `${outputFile}.map`);
  if (code === undefined || map === undefined) throw new Error(`esbuild produced no ${entry} with its source map`);
  return {
    ok: true,
    code: Buffer.from(code.contents),
    map: Buffer.from(map.contents),
    etag: `"${createHash('sha256').update(code.contents).digest('base64url').slice(0, 27)}"`,
    lastModified: newest,
  };
}

function oneLine({ location, text }: Message): string {
  return location ? `${location.file}:${location.line}:${location.column}: ERROR: ${text}` : `ERROR: ${text}`;
}

function isBuildFailure(error: unknown): error is BuildFailure {
  return error instanceof Error && Array.isArray((error as Partial<BuildFailure>).errors);
}
