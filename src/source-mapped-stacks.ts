import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { SourceMapLines, type OriginalPosition } from './source-map-lines.ts';

/**
 * Stack traces of the built server (dist/) name the lines of src/, as `--enable-source-maps`
 * would, but a bundle's source map is read only when a stack that passes through it is first
 * formatted. Node's own option reads the map of every module and scans its whole text as it
 * loads, about 85 ms of a 2-core machine's start (issue 38).
 *
 * Installed only where no one maps already (`--enable-source-maps`, tsx) and only for modules
 * with a `.map` beside them.
 */
export function mapStackTracesOnDemand(): void {
  if (process.sourceMapsEnabled) return;
  const maps = new Map<string, SourceMapLines | undefined>();
  const mapOf = (file: string): SourceMapLines | undefined => {
    if (!maps.has(file)) maps.set(file, readSourceMap(file));
    return maps.get(file);
  };
  Error.prepareStackTrace = (error, callSites) => {
    const frames = callSites.map((callSite) => `\n    at ${sourceFrame(callSite, mapOf)}`);
    return `${errorHeader(error)}${frames.join('')}`;
  };
}

function readSourceMap(file: string): SourceMapLines | undefined {
  const mapFile = `${file}.map`;
  try {
    const payload = JSON.parse(readFileSync(mapFile, 'utf8')) as { sources: string[]; mappings: string };
    const folder = pathToFileURL(path.dirname(mapFile) + path.sep);
    const sources = payload.sources.map((source) => {
      const url = new URL(source, folder);
      // A module the build made up (a namespace of its own, such as `no-glob:glob`) keeps its name.
      return url.protocol === 'file:' ? fileURLToPath(url) : source;
    });
    return new SourceMapLines(payload.mappings, sources);
  } catch {
    return undefined;
  }
}

function sourceFrame(callSite: NodeJS.CallSite, mapOf: (file: string) => SourceMapLines | undefined): string {
  const frame = String(callSite);
  const fileName = callSite.getFileName();
  const line = callSite.getLineNumber();
  const column = callSite.getColumnNumber();
  if (!fileName || line === null || column === null || !/\.c?js$/.test(fileName)) return frame;
  const file = fileName.startsWith('file:') ? fileURLToPath(fileName) : fileName;
  const original = originalPosition(mapOf(file), line - 1, column - 1);
  if (original === undefined) return frame;
  return frame.replace(`${fileName}:${line}:${column}`, `${original.source}:${original.line + 1}:${original.column + 1}`);
}

/** A map that turns out malformed leaves the frame as V8 wrote it: formatting a stack must not throw. */
function originalPosition(map: SourceMapLines | undefined, line: number, column: number): OriginalPosition | undefined {
  try {
    return map?.find(line, column);
  } catch {
    return undefined;
  }
}

/** The first line V8 itself writes: `Name: message`. */
function errorHeader(error: Error): string {
  try {
    return Error.prototype.toString.call(error);
  } catch {
    return '<error>';
  }
}
