import { isAscii } from 'node:buffer';
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { Script } from 'node:vm';
import { crc32 } from 'node:zlib';

/**
 * A CommonJS bundle run with V8's code cache (issue 38). Node 20 caches no compiled code for
 * ES modules, and compiling the start bundle's 2 MB, then each function as it first runs, was a
 * third of every start. So scripts/build.mjs bundles the server as one CommonJS function
 * expression, `(function (exports, require, module, __filename, __dirname) {…})`, whose import()
 * calls are require calls (a script's own import() needs Node's experimental vm modules), starts it once
 * and keeps V8's code for every function that start compiled beside it. A later start hands that
 * code to V8 instead of compiling.
 *
 * V8 refuses a cache made by another V8 or with other flags, and the server then compiles as
 * before. It checks the source only by its length, so the cache's name carries the bundle's
 * content hash (the build names both), and a checksum guards the cache's own bytes.
 */

/** What became of the code cache: handed to V8, refused by it, absent, or failing its checksum. */
export type CodeCacheState = 'used' | 'rejected' | 'missing' | 'damaged';

export interface CodeCachedScript<Exports> {
  exports: Exports;
  codeCache: CodeCacheState;
  /** Writes V8's code for every function of the bundle compiled so far, for the starts to come. */
  writeCodeCache(): void;
}

const checksumBytes = 4;

export function runCodeCachedScript<Exports>(scriptFile: string, cacheFile: string): CodeCachedScript<Exports> {
  const bytes = readFileSync(scriptFile);
  // The build writes plain ASCII (test/built-start.test.ts), which reads as latin1 in a fraction of utf8's time.
  const source = bytes.toString(isAscii(bytes) ? 'latin1' : 'utf8');
  const { cachedData, state } = readCodeCache(cacheFile);
  const script = new Script(source, { filename: scriptFile, cachedData });
  const module = { exports: {} as Exports };
  const run = script.runInThisContext() as (exports: Exports, require: NodeJS.Require, module: { exports: Exports }, filename: string, dirname: string) => void;
  run(module.exports, createRequire(scriptFile), module, scriptFile, path.dirname(scriptFile));
  return {
    exports: module.exports,
    codeCache: state === 'used' && script.cachedDataRejected ? 'rejected' : state,
    writeCodeCache: () => {
      const code = script.createCachedData();
      const checksum = Buffer.alloc(checksumBytes);
      checksum.writeUInt32BE(crc32(code));
      const partial = `${cacheFile}.${process.pid}.partial`;
      writeFileSync(partial, Buffer.concat([checksum, code]));
      renameSync(partial, cacheFile);
    },
  };
}

function readCodeCache(cacheFile: string): { cachedData?: Buffer; state: CodeCacheState } {
  let content: Buffer;
  try {
    content = readFileSync(cacheFile);
  } catch {
    return { state: 'missing' };
  }
  const code = content.subarray(checksumBytes);
  if (content.length <= checksumBytes || content.readUInt32BE(0) !== crc32(code)) return { state: 'damaged' };
  return { cachedData: code, state: 'used' };
}
