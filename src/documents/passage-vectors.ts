import type { VectorIndex, VectorMatch } from './vector-index.ts';

/**
 * The passages' vectors in memory, each knowing its document: a search reaches only the documents
 * it may read, and a deleted document's vectors go with it.
 */
export class PassageVectors {
  private readonly documentOf = new Map<number, string>();
  private readonly passagesOf = new Map<string, Set<number>>();

  constructor(private readonly index: VectorIndex) {}

  add(documentId: string, passageId: number, vector: Float32Array): void {
    this.index.add(passageId, vector);
    this.documentOf.set(passageId, documentId);
    let passages = this.passagesOf.get(documentId);
    if (!passages) this.passagesOf.set(documentId, (passages = new Set()));
    passages.add(passageId);
  }

  removeDocument(documentId: string): void {
    for (const passageId of this.passagesOf.get(documentId) ?? []) {
      this.index.remove(passageId);
      this.documentOf.delete(passageId);
    }
    this.passagesOf.delete(documentId);
  }

  /** The `k` nearest passages of the documents `mayRead` admits. */
  search(query: Float32Array, k: number, mayRead: (documentId: string) => boolean): VectorMatch[] {
    if (this.index.size === 0 || query.length !== this.index.dimensions) return [];
    return this.index.search(query, k, (passageId) => {
      const documentId = this.documentOf.get(passageId);
      return documentId !== undefined && mayRead(documentId);
    });
  }

  get size(): number {
    return this.index.size;
  }

  get bytes(): number {
    return this.index.bytes;
  }
}
