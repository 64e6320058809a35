import { closeSync, openSync, readFileSync, writeSync } from 'node:fs';

/**
 * The names that stay in Hearth's exec environment (what `/proc/<pid>/environ` shows) once it
 * hardened itself. Every other variable, secret or not, only lives in the process's memory.
 */
const keptNames = new Set([
  // The same harmless set a tool's child process gets (src/tools/tool-environment.ts).
  'PATH', 'HOME', 'LANG', 'LANGUAGE', 'TZ', 'TERM', 'USER', 'LOGNAME', 'SHELL', 'TMPDIR',
  // Read by node, libuv, OpenSSL, the dynamic loader or tsx while the process starts. They
  // configure the runtime (NODE_OPTIONS carries memory limits and loaders), they hold no
  // credentials, and showing them tells a reader how the server runs.
  'NODE_OPTIONS', 'NODE_PATH', 'NODE_EXTRA_CA_CERTS', 'NODE_ICU_DATA', 'NODE_COMPILE_CACHE', 'NODE_V8_COVERAGE',
  'UV_THREADPOOL_SIZE', 'OPENSSL_CONF', 'SSL_CERT_FILE', 'SSL_CERT_DIR', 'LD_LIBRARY_PATH', 'LD_PRELOAD',
  'TSX_TSCONFIG_PATH', 'TSX_DISABLE_CACHE',
  // A Hearth started by another Hearth's tool keeps that tool's marker visible (src/tools/process-markers.ts).
  'HEARTH_PROCESS',
]);

export function isKeptInExecEnvironment(name: string): boolean {
  return keptNames.has(name) || name.startsWith('LC_');
}

/** One `NAME=value` string of the exec environment, where it lies in the block. */
interface ExecEntry {
  name: string;
  offset: number;
  length: number;
}

/** The entries of this process's exec environment, or undefined without a readable /proc/self/environ. */
function readExecEnvironment(environFile = '/proc/self/environ'): ExecEntry[] | undefined {
  let block: Buffer;
  try {
    block = readFileSync(environFile);
  } catch {
    return undefined;
  }
  const entries: ExecEntry[] = [];
  for (let offset = 0; offset < block.length; ) {
    const end = block.indexOf(0, offset);
    const length = (end === -1 ? block.length : end) - offset;
    if (length > 0) {
      const equals = block.indexOf('=', offset);
      const nameEnd = equals === -1 || equals > offset + length ? offset + length : equals;
      entries.push({ name: block.toString('utf8', offset, nameEnd), offset, length });
    }
    offset += length + 1;
  }
  return entries;
}

/** The variable names of this process's exec environment, or undefined without a readable /proc/self/environ. */
export function execEnvironmentNames(environFile?: string): string[] | undefined {
  return readExecEnvironment(environFile)?.map((entry) => entry.name);
}

/** Where the kernel reads `/proc/self/environ` from: the start and end addresses of the strings execve copied in. */
function environmentAddresses(): { start: number; end: number } | string {
  let stat: string;
  try {
    stat = readFileSync('/proc/self/stat', 'utf8');
  } catch (error) {
    return `cannot read /proc/self/stat: ${(error as Error).message}`;
  }
  // The command name, in parentheses, may hold spaces: the fields are counted after its last ')'.
  // env_start and env_end are fields 50 and 51 (proc(5)); the first after the name is field 3.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).trim().split(' ');
  const start = Number(fields[50 - 3]);
  const end = Number(fields[51 - 3]);
  if (!Number.isSafeInteger(start) || !Number.isSafeInteger(end) || end <= start) {
    return '/proc/self/stat gives no environment addresses (Linux before 3.5?)';
  }
  return { start, end };
}

/**
 * Takes every variable beyond the harmless names out of the exec environment while keeping it
 * in `process.env`: each is unset and set again, so libc holds it in a string of its own heap
 * and `environ` points there, then the bytes execve copied in are overwritten with zeros
 * through /proc/self/mem. The names it moved, or why it could not.
 */
export function moveOutOfExecEnvironment(): { moved: string[] } | { problem: string } {
  const entries = readExecEnvironment();
  if (!entries) return { problem: 'cannot read /proc/self/environ' };
  const beyondKept = entries.filter((entry) => !isKeptInExecEnvironment(entry.name));
  if (beyondKept.length === 0) return { moved: [] };
  const addresses = environmentAddresses();
  if (typeof addresses === 'string') return { problem: addresses };
  const names = [...new Set(beyondKept.map((entry) => entry.name))].filter((name) => name !== '');
  for (const name of names) {
    const value = process.env[name];
    // Unset first: a name that appears twice leaves no pointer to the bytes below.
    delete process.env[name];
    if (value !== undefined) process.env[name] = value;
  }
  let memory: number | undefined;
  try {
    memory = openSync('/proc/self/mem', 'r+');
    for (const entry of beyondKept) writeSync(memory, Buffer.alloc(entry.length), 0, entry.length, addresses.start + entry.offset);
  } catch (error) {
    return { problem: `cannot overwrite its exec environment through /proc/self/mem: ${(error as Error).message}` };
  } finally {
    if (memory !== undefined) closeSync(memory);
  }
  const left = (execEnvironmentNames() ?? []).filter((name) => !isKeptInExecEnvironment(name));
  if (left.length > 0) return { problem: `its exec environment still shows ${left.length} variables besides the harmless ones after overwriting them` };
  return { moved: names };
}
