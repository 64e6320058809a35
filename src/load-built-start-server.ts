import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { runCodeCachedScript } from './code-cached-script.ts';
import type { StartServerModule } from './load-start-server.ts';

/** The start bundle's file name beside this one, `start-server-<content hash>.cjs`, given by scripts/build.mjs. */
declare const HEARTH_START_SCRIPT: string;

/**
 * Set only by scripts/build.mjs for the one start that makes the code cache: the server starts
 * in a temporary DATA_DIR, and once it listens and its services have started, the code V8
 * compiled for all that is written and the server stops.
 */
const makeCodeCacheVariable = 'HEARTH_MAKE_CODE_CACHE';

/** Built in place of src/load-start-server.ts (scripts/build.mjs): the server from its bundle, with V8's code cache. */
export async function loadStartServer(): Promise<StartServerModule> {
  const scriptFile = path.join(path.dirname(fileURLToPath(import.meta.url)), HEARTH_START_SCRIPT);
  const loaded = runCodeCachedScript<Pick<StartServerModule, 'startServer'>>(scriptFile, scriptFile.replace(/\.cjs$/, '.code-cache'));
  if (process.env[makeCodeCacheVariable] !== '1') return { startServer: loaded.exports.startServer, codeCache: loaded.codeCache };
  return {
    startServer: async (...options) => {
      const server = await loaded.exports.startServer(...options);
      await server.started;
      loaded.writeCodeCache();
      process.kill(process.pid, 'SIGTERM');
      return server;
    },
    codeCache: loaded.codeCache,
  };
}
