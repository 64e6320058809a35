import type { Embedder, EmbeddingResult } from '../../src/documents/embedder.ts';
import { unitVector } from '../../src/documents/embedder.ts';
import { hashedEmbedding } from './hashed-embedding.ts';

/**
 * An Embedder over the stand-ins' hashed bag-of-words vectors, in memory: it can be taken down
 * (answers as an unreachable backend does) and held (each call waits until released), and it
 * counts the texts it embedded.
 */
export class StandInEmbedder implements Embedder {
  embeddedTexts = 0;
  calls = 0;
  private down = false;
  private held?: { released: Promise<void>; release: () => void; reached: Array<() => void> };

  constructor(
    readonly model = 'hashed-words',
    private readonly dimensions = 256,
  ) {}

  async embed(texts: readonly string[], signal?: AbortSignal): Promise<EmbeddingResult> {
    this.calls += 1;
    if (this.held) {
      for (const reached of this.held.reached.splice(0)) reached();
      const aborted = new Promise<void>((resolve) => signal?.addEventListener('abort', () => resolve(), { once: true }));
      await Promise.race([this.held.released, aborted]);
    }
    if (signal?.aborted) return { success: false, error: 'The request was aborted.', code: 'aborted' };
    if (this.down) return { success: false, error: 'Ollama is not reachable at http://127.0.0.1:9 (connect ECONNREFUSED)', code: 'llm_unreachable' };
    this.embeddedTexts += texts.length;
    return { success: true, vectors: texts.map((text) => unitVector(hashedEmbedding(text, this.dimensions))) };
  }

  takeDown(): void {
    this.down = true;
  }

  bringBack(): void {
    this.down = false;
  }

  /** Calls from now on wait until `release`; answers once a call is waiting. */
  hold(): { waiting: Promise<void>; release: () => void } {
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    let reached!: () => void;
    const waiting = new Promise<void>((resolve) => (reached = resolve));
    this.held = { released, release, reached: [reached] };
    return {
      waiting,
      release: () => {
        this.held = undefined;
        release();
      },
    };
  }
}
