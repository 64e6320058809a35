// Texts into unit-length vectors through the default backend's embedding model (EMBEDDING_MODEL).
import type { Config } from '../config.ts';
import type { BackendRegistry } from '../llm/backend-registry.ts';
import type { LlmErrorCode } from '../llm/types.ts';

export type EmbeddingResult = { success: true; vectors: Float32Array[] } | { success: false; error: string; code: LlmErrorCode };

export interface Embedder {
  /** The model the vectors come from: a passage embedded by another model must be embedded again. */
  readonly model: string;
  /** One unit-length vector per text, in order; a failure is data (an unreachable backend, a missing model). */
  embed(texts: readonly string[], signal?: AbortSignal): Promise<EmbeddingResult>;
}

/** Texts sent in one request: small enough that a CPU-only Ollama answers well within its stall limit. */
export const embeddingBatchSize = 32;

export function createEmbedder(options: { backends: Pick<BackendRegistry, 'choose'>; config: Pick<Config, 'EMBEDDING_MODEL'> }): Embedder {
  const model = options.config.EMBEDDING_MODEL;
  return {
    model,
    async embed(texts, signal) {
      const choice = options.backends.choose();
      if (!choice.ok) return { success: false, error: choice.error.message, code: choice.error.code };
      const vectors: Float32Array[] = [];
      for (let start = 0; start < texts.length; start += embeddingBatchSize) {
        const input = texts.slice(start, start + embeddingBatchSize);
        const result = await choice.backend.embed({ model, input, ...(signal && { signal }) });
        if (!result.success) return { success: false, error: result.error, code: result.code };
        for (const embedding of result.embeddings) vectors.push(unitVector(embedding));
      }
      return { success: true, vectors };
    },
  };
}

/** The vector scaled to length 1 (the zero vector stays zero), so an inner product is the cosine. */
export function unitVector(values: ArrayLike<number>): Float32Array {
  const vector = Float32Array.from(values);
  let sum = 0;
  for (const value of vector) sum += value * value;
  if (sum === 0) return vector;
  const scale = 1 / Math.sqrt(sum);
  for (let index = 0; index < vector.length; index++) vector[index]! *= scale;
  return vector;
}
