import { createRequire } from 'node:module';
import { constants } from 'node:os';

/** The few libc calls Node does not offer, reached through koffi. */
export interface Libc {
  /** prctl(PR_GET_DUMPABLE): whether processes of the same user may read this one's /proc entries. */
  isDumpable(): boolean;
  /** prctl(PR_SET_DUMPABLE, 0); undefined on success, else why not. */
  makeNonDumpable(): string | undefined;
  /** malloc_trim(0): glibc gives the free pages of its heaps back to the system; false where there is none (musl). */
  trimMallocHeaps(): boolean;
}

const PR_GET_DUMPABLE = 3;
const PR_SET_DUMPABLE = 4;

type Koffi = typeof import('koffi');

/** Binds libc, or says why it cannot (not Linux, koffi's native part missing, an old libc). */
export function loadLibc(): Libc | string {
  if (process.platform !== 'linux') return `prctl is a Linux call; this is ${process.platform}`;
  let koffi: Koffi;
  let prctl: (option: number, a2: number, a3: number, a4: number, a5: number) => number;
  try {
    // Loaded here rather than imported, so a platform without koffi's binary still starts Hearth.
    koffi = createRequire(import.meta.url)('koffi') as Koffi;
    // The symbols of the running process: libc is linked into node, whichever libc it is.
    const library = koffi.load(null);
    prctl = library.func('int prctl(int option, unsigned long arg2, unsigned long arg3, unsigned long arg4, unsigned long arg5)');
  } catch (error) {
    return `cannot reach libc through koffi: ${(error as Error).message}`;
  }
  let mallocTrim: ((pad: number) => number) | undefined;
  try {
    mallocTrim = koffi.load(null).func('int malloc_trim(size_t pad)');
  } catch {
    mallocTrim = undefined;
  }
  const failure = (call: string) => {
    const code = koffi.errno();
    const name = Object.entries(constants.errno).find(([, value]) => value === code)?.[0] ?? 'unknown';
    return `${call} failed with errno ${code} (${name})`;
  };
  return {
    isDumpable: () => prctl(PR_GET_DUMPABLE, 0, 0, 0, 0) === 1,
    makeNonDumpable: () => (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) === 0 ? undefined : failure('prctl(PR_SET_DUMPABLE, 0)')),
    trimMallocHeaps: () => {
      if (!mallocTrim) return false;
      mallocTrim(0);
      return true;
    },
  };
}

let bound: Libc | string | undefined;

/** The process's one binding of libc (loaded on first use), or why there is none. */
export function libc(): Libc | string {
  bound ??= loadLibc();
  return bound;
}
