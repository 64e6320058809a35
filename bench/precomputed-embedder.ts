// The documents scenarios' embedder: vectors made before the timing, so no embedding time is counted.
import type { Embedder, EmbeddingResult } from '../src/documents/embedder.ts';

export const benchEmbeddingModel = 'bench-precomputed';

/** Answers a text it knows with its vector, any other with the next vector of a pool. */
export class PrecomputedEmbedder implements Embedder {
  readonly model = benchEmbeddingModel;
  private next = 0;

  constructor(
    private readonly pool: readonly Float32Array[],
    private readonly known = new Map<string, Float32Array>(),
  ) {}

  async embed(texts: readonly string[]): Promise<EmbeddingResult> {
    return { success: true, vectors: texts.map((text) => this.known.get(text) ?? this.pool[this.next++ % this.pool.length]!) };
  }
}
