/** Whether a model of `size` bytes fits this machine's memory: `null` when its size is unknown. */
export type Fit = 'fits' | 'tight' | 'too_big' | null;

export interface MachineMemory {
  total: number;
  available: number;
}

// A loaded model takes more than its file: the context's cache and the runtime's buffers.
const loadedOverFile = 1.2;

/** Fits in what is free now; tight when only the whole memory would hold it (others must make room); else too big. */
export function fitOf(size: number | undefined, memory: MachineMemory): Fit {
  if (size === undefined || size <= 0) return null;
  const needed = size * loadedOverFile;
  if (needed <= memory.available) return 'fits';
  if (needed <= memory.total) return 'tight';
  return 'too_big';
}
