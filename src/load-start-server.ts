import type { CodeCacheState } from './code-cached-script.ts';

/** What src/main.ts starts the server with, and whether V8's code cache spared it compiling. */
export interface StartServerModule {
  startServer: typeof import('./start-server.ts').startServer;
  codeCache?: CodeCacheState;
}

/**
 * The sources' way to the rest of the server: a plain import. scripts/build.mjs puts
 * src/load-built-start-server.ts in this module's place, which runs the built bundle with V8's
 * code cache.
 */
export async function loadStartServer(): Promise<StartServerModule> {
  const { startServer } = await import('./start-server.ts');
  return { startServer };
}
