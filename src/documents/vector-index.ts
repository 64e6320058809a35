// Passage vectors in memory and the nearest ones to a question. Vectors are unit length (the
// embedder normalises them), so the inner product is the cosine similarity.

export interface VectorMatch {
  id: number;
  /** Cosine similarity, -1..1, higher is nearer. */
  score: number;
}

export interface VectorIndex {
  /** Adds a vector under `id`, replacing the one it had. All vectors of an index have one length. */
  add(id: number, vector: Float32Array): void;
  /** False when the index had no vector under `id`. */
  remove(id: number): boolean;
  has(id: number): boolean;
  /** The `k` nearest vectors that pass `filter`, nearest first. */
  search(query: Float32Array, k: number, filter?: (id: number) => boolean): VectorMatch[];
  readonly size: number;
  /** Memory the vectors take, in bytes. */
  readonly bytes: number;
  /** The vectors' length, fixed by the first one added; undefined while the index is empty. */
  readonly dimensions: number | undefined;
}

const initialCapacity = 1024;

/**
 * Exact search over every vector, kept in one Float32Array (a slot per vector, a removed one
 * filled by the last). Chosen over int8 quantisation, sqlite-vec and usearch's HNSW by the
 * measurements in bench/RESULTS.md ("Documents: the vector index").
 */
export function createVectorIndex(): VectorIndex {
  let dimensions: number | undefined;
  let vectors = new Float32Array(0);
  let idAt: number[] = [];
  const slotOf = new Map<number, number>();

  function grow(length: number): void {
    const capacity = vectors.length / length;
    if (slotOf.size < capacity) return;
    const larger = new Float32Array(Math.max(initialCapacity, capacity * 2) * length);
    larger.set(vectors);
    vectors = larger;
  }

  return {
    add(id, vector) {
      if (dimensions === undefined) dimensions = vector.length;
      if (vector.length !== dimensions || dimensions === 0) {
        throw new RangeError(`a vector of ${vector.length} dimensions cannot join an index of ${dimensions}`);
      }
      let slot = slotOf.get(id);
      if (slot === undefined) {
        grow(dimensions);
        slot = slotOf.size;
        slotOf.set(id, slot);
        idAt[slot] = id;
      }
      vectors.set(vector, slot * dimensions);
    },
    remove(id) {
      const slot = slotOf.get(id);
      if (slot === undefined || dimensions === undefined) return false;
      const last = slotOf.size - 1;
      if (slot !== last) {
        const lastId = idAt[last]!;
        vectors.copyWithin(slot * dimensions, last * dimensions, (last + 1) * dimensions);
        idAt[slot] = lastId;
        slotOf.set(lastId, slot);
      }
      slotOf.delete(id);
      idAt.length = last;
      if (slotOf.size === 0) {
        dimensions = undefined;
        vectors = new Float32Array(0);
        idAt = [];
      }
      return true;
    },
    has: (id) => slotOf.has(id),
    search(query, k, filter) {
      if (dimensions === undefined || k <= 0) return [];
      if (query.length !== dimensions) throw new RangeError(`a query of ${query.length} dimensions cannot search an index of ${dimensions}`);
      const best = new TopK(k);
      const length = dimensions;
      for (let slot = 0, count = slotOf.size; slot < count; slot++) {
        const offset = slot * length;
        let score = 0;
        for (let index = 0; index < length; index++) score += query[index]! * vectors[offset + index]!;
        if (score <= best.threshold) continue;
        const id = idAt[slot]!;
        if (filter && !filter(id)) continue;
        best.offer(id, score);
      }
      return best.sorted();
    },
    get size() {
      return slotOf.size;
    },
    get bytes() {
      return slotOf.size * (dimensions ?? 0) * Float32Array.BYTES_PER_ELEMENT;
    },
    get dimensions() {
      return dimensions;
    },
  };
}

/** The `k` highest scores offered, in a min-heap so each offer costs log k. */
class TopK {
  private readonly ids: number[] = [];
  private readonly scores: number[] = [];

  constructor(private readonly k: number) {}

  /** A score at or below this cannot enter. */
  get threshold(): number {
    return this.scores.length < this.k ? -Infinity : this.scores[0]!;
  }

  offer(id: number, score: number): void {
    if (this.scores.length < this.k) {
      this.ids.push(id);
      this.scores.push(score);
      this.siftUp(this.scores.length - 1);
    } else if (score > this.scores[0]!) {
      this.ids[0] = id;
      this.scores[0] = score;
      this.siftDown(0);
    }
  }

  sorted(): VectorMatch[] {
    return this.ids.map((id, index) => ({ id, score: this.scores[index]! })).sort((first, second) => second.score - first.score);
  }

  private siftUp(index: number): void {
    while (index > 0) {
      const parent = (index - 1) >> 1;
      if (this.scores[parent]! <= this.scores[index]!) return;
      this.swap(index, parent);
      index = parent;
    }
  }

  private siftDown(index: number): void {
    for (;;) {
      const left = index * 2 + 1;
      const right = left + 1;
      let smallest = index;
      if (left < this.scores.length && this.scores[left]! < this.scores[smallest]!) smallest = left;
      if (right < this.scores.length && this.scores[right]! < this.scores[smallest]!) smallest = right;
      if (smallest === index) return;
      this.swap(index, smallest);
      index = smallest;
    }
  }

  private swap(first: number, second: number): void {
    [this.ids[first], this.ids[second]] = [this.ids[second]!, this.ids[first]!];
    [this.scores[first], this.scores[second]] = [this.scores[second]!, this.scores[first]!];
  }
}
