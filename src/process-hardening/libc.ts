import { createRequire } from 'node:module';
import { constants } from 'node:os';

/** The few libc calls Node does not offer, reached through koffi. */
export interface Libc {
  /** prctl(PR_GET_DUMPABLE): whether processes of the same user may read this one's /proc entries. */
  isDumpable(): boolean;
  /** prctl(PR_SET_DUMPABLE, 0); undefined on success, else why not. */
  makeNonDumpable(): string | undefined;
  /** memfd_create without MFD_CLOEXEC, so the descriptor survives execve; a descriptor or why not. */
  createInheritableMemoryFile(name: string): number | string;
  /** execve; returns only when it failed, saying why. */
  execute(executable: string, argv: string[], environment: string[]): string;
  /** malloc_trim(0): glibc gives the free pages of its heaps back to the system; false where there is none (musl). */
  trimMallocHeaps(): boolean;
}

const PR_GET_DUMPABLE = 3;
const PR_SET_DUMPABLE = 4;
const F_GETFD = 1;
const F_SETFD = 2;
const FD_CLOEXEC = 1;

type Koffi = typeof import('koffi');

/** Binds libc, or says why it cannot (not Linux, koffi's native part missing, an old libc). */
export function loadLibc(): Libc | string {
  if (process.platform !== 'linux') return `prctl and memfd_create are Linux calls; this is ${process.platform}`;
  let koffi: Koffi;
  let prctl: (option: number, a2: number, a3: number, a4: number, a5: number) => number;
  let memfdCreate: (name: string, flags: number) => number;
  let execve: (path: string, argv: (string | null)[], envp: (string | null)[]) => number;
  let fcntl: (descriptor: number, command: number, argument: number) => number;
  try {
    // Loaded here rather than imported, so a platform without koffi's binary still starts Hearth.
    koffi = createRequire(import.meta.url)('koffi') as Koffi;
    // The symbols of the running process: libc is linked into node, whichever libc it is.
    const library = koffi.load(null);
    prctl = library.func('int prctl(int option, unsigned long arg2, unsigned long arg3, unsigned long arg4, unsigned long arg5)');
    memfdCreate = library.func('int memfd_create(const char *name, unsigned int flags)');
    execve = library.func('int execve(const char *path, const char **argv, const char **envp)');
    fcntl = library.func('int fcntl(int fd, int cmd, int arg)');
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
    createInheritableMemoryFile: (name) => {
      const descriptor = memfdCreate(name, 0);
      return descriptor >= 0 ? descriptor : failure('memfd_create');
    },
    execute: (executable, argv, environment) => {
      // Node marks stdin, stdout and stderr close-on-exec at start; the restarted process needs them.
      const stdio = [0, 1, 2].map((descriptor) => ({ descriptor, flags: fcntl(descriptor, F_GETFD, 0) })).filter(({ flags }) => flags >= 0);
      for (const { descriptor, flags } of stdio) fcntl(descriptor, F_SETFD, flags & ~FD_CLOEXEC);
      execve(executable, [...argv, null], [...environment, null]);
      const failed = failure('execve');
      for (const { descriptor, flags } of stdio) fcntl(descriptor, F_SETFD, flags);
      return failed;
    },
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
