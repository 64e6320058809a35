/** One line of Ollama's /api/pull stream. */
export interface PullLine {
  status: string;
  digest?: string;
  total?: number;
  completed?: number;
}

/**
 * The bytes of a pull over all its layers so far known: Ollama reports each layer on its own
 * (`pulling <digest>` with that layer's total and completed), and the page shows one bar.
 */
export class PullProgress {
  private readonly layers = new Map<string, { total: number; completed: number }>();

  add(line: PullLine): { completed?: number; total?: number } {
    if (line.digest && typeof line.total === 'number') {
      this.layers.set(line.digest, { total: line.total, completed: Math.min(line.completed ?? 0, line.total) });
    }
    if (this.layers.size === 0) return {};
    let completed = 0;
    let total = 0;
    for (const layer of this.layers.values()) {
      completed += layer.completed;
      total += layer.total;
    }
    return { completed, total };
  }
}
