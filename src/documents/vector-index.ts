// Passage vectors in memory and the nearest ones to a question. Vectors are unit length (the
// embedder normalises them), so the inner product is the cosine similarity.
//
// Each vector is kept twice, small: its signs as bits (96 bytes for 768 dimensions) and its values
// as int8 with one scale (768 bytes). A search ranks every vector by how many signs it shares with
// the question (a popcount over a few words), then scores the best `candidatePool` of those that
// pass the filter on their int8 values, and returns the best k. Chosen by measurement over float32
// and int8 brute force, sqlite-vec and usearch's HNSW: see bench/RESULTS.md, "Issue 39: documents"
// (100,000 × 768 on 2 cores: ~10 ms CPU a query, 84 MiB, no native code).

export interface VectorMatch {
  id: number;
  /** Cosine similarity, -1..1, higher is nearer (from the int8 values: within about 0.01 of the exact one). */
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
  /** Memory the vectors take, in bytes (as allocated: the index grows by blocks of 1,024). */
  readonly bytes: number;
  /** The vectors' length, fixed by the first one added; undefined while the index is empty. */
  readonly dimensions: number | undefined;
}

/**
 * How many vectors, nearest by shared signs, are scored on their values. At 100,000 clustered
 * vectors of 768 dimensions, 99.75% of the true top 20 were among the best 1,000; twice that, for
 * a margin, costs ~1 ms more. Vectors the filter turns away do not count.
 */
export const candidatePool = 2000;

/** Vectors kept per block: the index grows a block at a time, never copying what it holds. */
const blockSize = 1024;
const blockShift = 10;

export function createVectorIndex(): VectorIndex {
  return new QuantisedVectorIndex();
}

/** One block's vectors: the int8 values, the sign bits and each vector's scale and id. */
interface Block {
  codes: Int8Array;
  signs: Int32Array;
  scales: Float32Array;
  ids: Float64Array;
}

class QuantisedVectorIndex implements VectorIndex {
  private length = 0;
  private words = 0;
  private blocks: Block[] = [];
  private readonly slotOf = new Map<number, number>();

  get size(): number {
    return this.slotOf.size;
  }

  get dimensions(): number | undefined {
    return this.length === 0 ? undefined : this.length;
  }

  get bytes(): number {
    const perVector = this.length + this.words * Int32Array.BYTES_PER_ELEMENT + Float32Array.BYTES_PER_ELEMENT + Float64Array.BYTES_PER_ELEMENT;
    return this.blocks.length * blockSize * perVector;
  }

  has(id: number): boolean {
    return this.slotOf.has(id);
  }

  add(id: number, vector: Float32Array): void {
    if (this.length === 0) {
      if (vector.length === 0) throw new RangeError('a vector needs at least one dimension');
      this.length = vector.length;
      this.words = Math.ceil(vector.length / 32);
    }
    if (vector.length !== this.length) throw new RangeError(`a vector of ${vector.length} dimensions cannot join an index of ${this.length}`);
    let slot = this.slotOf.get(id);
    if (slot === undefined) {
      slot = this.size;
      if (slot >>> blockShift === this.blocks.length) this.blocks.push(this.newBlock());
      this.slotOf.set(id, slot);
      this.blockOf(slot).ids[slot & (blockSize - 1)] = id;
    }
    this.store(slot, vector);
  }

  remove(id: number): boolean {
    const slot = this.slotOf.get(id);
    if (slot === undefined) return false;
    const last = this.size - 1;
    if (slot !== last) this.move(last, slot);
    this.slotOf.delete(id);
    if (this.size === 0) {
      this.length = 0;
      this.words = 0;
      this.blocks = [];
    } else {
      // One spare block is kept, so adding and removing at a block's edge does not allocate each time.
      this.blocks.length = Math.min(this.blocks.length, Math.ceil(this.size / blockSize) + 1);
    }
    return true;
  }

  search(query: Float32Array, k: number, filter?: (id: number) => boolean): VectorMatch[] {
    if (this.size === 0 || k <= 0) return [];
    if (query.length !== this.length) throw new RangeError(`a query of ${query.length} dimensions cannot search an index of ${this.length}`);
    const best = new TopK(k);
    const pool = Math.max(candidatePool, k);
    let scored = 0;
    for (const slot of this.slotsNearestBySigns(query, pool)) {
      const block = this.blockOf(slot);
      const id = block.ids[slot & (blockSize - 1)]!;
      if (filter && !filter(id)) continue;
      best.offer(id, score(query, block, slot & (blockSize - 1), this.length));
      if (++scored === pool) break;
    }
    return best.sorted();
  }

  /** Every slot, those sharing the most signs with the query first (all of them, in slot order, when there are few). */
  private *slotsNearestBySigns(query: Float32Array, pool: number): Generator<number> {
    const count = this.size;
    if (count <= pool) {
      for (let slot = 0; slot < count; slot++) yield slot;
      return;
    }
    const { words } = this;
    const querySigns = new Int32Array(words);
    for (let index = 0; index < query.length; index++) if (query[index]! > 0) querySigns[index >> 5]! |= 1 << (index & 31);
    // Counting sort by the number of differing signs, which is at most the vector's length.
    const differing = new Uint16Array(count);
    const starts = new Uint32Array(this.length + 2);
    for (let slot = 0; slot < count; slot++) {
      const signs = this.blockOf(slot).signs;
      const offset = (slot & (blockSize - 1)) * words;
      let total = 0;
      for (let word = 0; word < words; word++) total += bitCount(signs[offset + word]! ^ querySigns[word]!);
      differing[slot] = total;
      starts[total + 1]!++;
    }
    for (let total = 1; total < starts.length; total++) starts[total]! += starts[total - 1]!;
    const order = new Uint32Array(count);
    for (let slot = 0; slot < count; slot++) order[starts[differing[slot]!]!++] = slot;
    yield* order;
  }

  private blockOf(slot: number): Block {
    return this.blocks[slot >>> blockShift]!;
  }

  private newBlock(): Block {
    return {
      codes: new Int8Array(blockSize * this.length),
      signs: new Int32Array(blockSize * this.words),
      scales: new Float32Array(blockSize),
      ids: new Float64Array(blockSize),
    };
  }

  /** Puts the vector of slot `from` into slot `to`, with its id. */
  private move(from: number, to: number): void {
    const { length, words } = this;
    const source = this.blockOf(from);
    const target = this.blockOf(to);
    const sourceIndex = from & (blockSize - 1);
    const targetIndex = to & (blockSize - 1);
    target.codes.set(source.codes.subarray(sourceIndex * length, (sourceIndex + 1) * length), targetIndex * length);
    target.signs.set(source.signs.subarray(sourceIndex * words, (sourceIndex + 1) * words), targetIndex * words);
    target.scales[targetIndex] = source.scales[sourceIndex]!;
    const id = source.ids[sourceIndex]!;
    target.ids[targetIndex] = id;
    this.slotOf.set(id, to);
  }

  private store(slot: number, vector: Float32Array): void {
    const { length, words } = this;
    const block = this.blockOf(slot);
    const index = slot & (blockSize - 1);
    let largest = 0;
    for (const value of vector) largest = Math.max(largest, Math.abs(value));
    const scale = largest / 127;
    block.scales[index] = scale;
    const codeOffset = index * length;
    const signOffset = index * words;
    block.signs.fill(0, signOffset, signOffset + words);
    for (let position = 0; position < length; position++) {
      const value = vector[position]!;
      block.codes[codeOffset + position] = scale === 0 ? 0 : Math.round(value / scale);
      if (value > 0) block.signs[signOffset + (position >> 5)]! |= 1 << (position & 31);
    }
  }
}

/** The query's inner product with the int8 values of the vector at `index` of the block, scaled back. */
function score(query: Float32Array, block: Block, index: number, length: number): number {
  const { codes } = block;
  const offset = index * length;
  let first = 0;
  let second = 0;
  let third = 0;
  let fourth = 0;
  let position = 0;
  for (; position + 3 < length; position += 4) {
    first += query[position]! * codes[offset + position]!;
    second += query[position + 1]! * codes[offset + position + 1]!;
    third += query[position + 2]! * codes[offset + position + 2]!;
    fourth += query[position + 3]! * codes[offset + position + 3]!;
  }
  for (; position < length; position++) first += query[position]! * codes[offset + position]!;
  return (first + second + third + fourth) * block.scales[index]!;
}

function bitCount(word: number): number {
  let bits = word - ((word >>> 1) & 0x55555555);
  bits = (bits & 0x33333333) + ((bits >>> 2) & 0x33333333);
  return Math.imul((bits + (bits >>> 4)) & 0x0f0f0f0f, 0x01010101) >>> 24;
}

/** The `k` highest scores offered, in a min-heap so each offer costs log k. */
class TopK {
  private readonly ids: number[] = [];
  private readonly scores: number[] = [];

  constructor(private readonly k: number) {}

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
