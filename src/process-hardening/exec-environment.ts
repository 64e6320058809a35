import { readFileSync } from 'node:fs';

/**
 * The names that stay in Hearth's exec environment (what `/proc/<pid>/environ` shows) after it
 * restarted itself. Every other variable, secret or not, only lives in the process's memory.
 */
const keptNames = new Set([
  // The same harmless set a tool's child process gets (src/tools/tool-environment.ts).
  'PATH', 'HOME', 'LANG', 'LANGUAGE', 'TZ', 'TERM', 'USER', 'LOGNAME', 'SHELL', 'TMPDIR',
  // Read by node, libuv, OpenSSL, the dynamic loader or tsx while the process starts, before any
  // of Hearth's code could put them back: dropping them would change how the server runs
  // (NODE_OPTIONS carries memory limits and loaders). They configure the runtime, they hold no
  // credentials.
  'NODE_OPTIONS', 'NODE_PATH', 'NODE_EXTRA_CA_CERTS', 'NODE_ICU_DATA', 'NODE_COMPILE_CACHE', 'NODE_V8_COVERAGE',
  'UV_THREADPOOL_SIZE', 'OPENSSL_CONF', 'SSL_CERT_FILE', 'SSL_CERT_DIR', 'LD_LIBRARY_PATH', 'LD_PRELOAD',
  'TSX_TSCONFIG_PATH', 'TSX_DISABLE_CACHE',
  // A Hearth started by another Hearth's tool keeps that tool's marker visible (src/tools/process-markers.ts).
  'HEARTH_PROCESS',
]);

/** Names the restarted process's exec environment holds besides the kept ones: the descriptor carrying the rest. */
export const environmentDescriptorVariable = 'HEARTH_ENVIRONMENT_FD';

export function isKeptInExecEnvironment(name: string): boolean {
  return keptNames.has(name) || name.startsWith('LC_');
}

/** The variable names of this process's exec environment, or undefined without a readable /proc/self/environ. */
export function execEnvironmentNames(environFile = '/proc/self/environ'): string[] | undefined {
  let block: string;
  try {
    block = readFileSync(environFile, 'latin1');
  } catch {
    return undefined;
  }
  return block.split('\0').filter((entry) => entry !== '').map((entry) => {
    const equals = entry.indexOf('=');
    return equals > 0 ? entry.slice(0, equals) : entry;
  });
}

/** The exec environment of the restarted process: the kept variables and the descriptor's number. */
export function restartEnvironment(environment: NodeJS.ProcessEnv, descriptor: number): string[] {
  const entries = Object.entries(environment).filter(([name, value]) => value !== undefined && isKeptInExecEnvironment(name));
  return [...entries.map(([name, value]) => `${name}=${value}`), `${environmentDescriptorVariable}=${descriptor}`];
}
