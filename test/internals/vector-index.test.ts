import { describe, expect, it } from 'vitest';
import { candidatePool, createVectorIndex, type VectorIndex } from '../../src/documents/vector-index.ts';
import { seededRandom } from '../support/seeded-random.ts';

function dot(first: Float32Array, second: Float32Array): number {
  let sum = 0;
  for (let index = 0; index < first.length; index++) sum += first[index]! * second[index]!;
  return sum;
}

function unit(vector: Float32Array): Float32Array {
  const length = Math.sqrt(dot(vector, vector));
  return vector.map((value) => value / length);
}

function unitVectors(count: number, dimensions: number, random: () => number): Float32Array[] {
  return Array.from({ length: count }, () => unit(Float32Array.from({ length: dimensions }, () => random() * 2 - 1)));
}

/** The plain reference: every vector scored in float64, sorted. */
function referenceTop(vectors: Map<number, Float32Array>, query: Float32Array, k: number, filter: (id: number) => boolean = () => true) {
  return [...vectors]
    .filter(([id]) => filter(id))
    .map(([id, vector]) => ({ id, score: dot(query, vector) }))
    .sort((first, second) => second.score - first.score)
    .slice(0, k);
}

/** int8 values move a score by well under this. */
const quantisation = 0.01;

function expectTopK(index: VectorIndex, vectors: Map<number, Float32Array>, query: Float32Array, k: number, filter?: (id: number) => boolean) {
  const found = index.search(query, k, filter);
  const reference = referenceTop(vectors, query, k, filter);
  expect(found).toHaveLength(reference.length);
  found.forEach((match, rank) => {
    // Each answer scores as it truly does, ranks where the reference has an equal score, and passes the filter.
    expect(Math.abs(match.score - dot(query, vectors.get(match.id)!))).toBeLessThan(quantisation);
    expect(Math.abs(match.score - reference[rank]!.score)).toBeLessThan(2 * quantisation);
    if (filter) expect(filter(match.id)).toBe(true);
  });
  expect(new Set(found.map((match) => match.id)).size).toBe(found.length);
  return { found, reference };
}

describe('the vector index', () => {
  it('finds the top k of the plain reference among more vectors than it scores in full', () => {
    const random = seededRandom(7);
    const vectors = new Map(unitVectors(candidatePool * 6, 64, random).map((vector, id) => [id * 3 + 1, vector] as const));
    const index = createVectorIndex();
    for (const [id, vector] of vectors) index.add(id, vector);
    expect(index.size).toBe(vectors.size);
    expect(index.dimensions).toBe(64);
    let same = 0;
    for (const query of unitVectors(20, 64, random)) {
      const { found, reference } = expectTopK(index, vectors, query, 10);
      same += found.filter((match) => reference.some((entry) => entry.id === match.id)).length;
    }
    // Near ties may swap at the edge of the top 10; a candidate lost by the sign ranking would show as many more.
    expect(same).toBeGreaterThanOrEqual(190);
  });

  it('puts a vector first for a query close to it, with a score near 1', () => {
    const random = seededRandom(11);
    const index = createVectorIndex();
    const vectors = unitVectors(5000, 128, random);
    vectors.forEach((vector, id) => index.add(id, vector));
    const target = vectors[4321]!;
    const query = target.map((value) => value + (random() - 0.5) * 0.01);
    const [first] = index.search(unit(query), 3);
    expect(first?.id).toBe(4321);
    expect(first!.score).toBeGreaterThan(0.99);
  });

  it('never returns a removed vector, and keeps the others findable after the slots move', () => {
    const random = seededRandom(3);
    const vectors = new Map(unitVectors(3000, 32, random).map((vector, id) => [id, vector] as const));
    const index = createVectorIndex();
    for (const [id, vector] of vectors) index.add(id, vector);
    // 32 int8 values, one word of signs, a scale and an id each, in blocks of 1,024.
    const perVector = 32 + 4 + 4 + 8;
    expect(index.bytes).toBe(3 * 1024 * perVector);
    for (let id = 0; id < 3000; id += 2) {
      expect(index.remove(id)).toBe(true);
      vectors.delete(id);
    }
    expect(index.remove(0)).toBe(false);
    expect(index.has(0)).toBe(false);
    expect(index.has(1)).toBe(true);
    expect(index.size).toBe(1500);
    expect(index.bytes).toBe(3 * 1024 * perVector);
    for (let id = 1; id < 1000; id += 2) index.remove(id);
    expect(index.bytes).toBe(2 * 1024 * perVector);
    for (let id = 1; id < 1000; id += 2) index.add(id, vectors.get(id)!);
    for (const [id, vector] of [...vectors].slice(0, 50)) expect(index.search(vector, 1)[0]?.id).toBe(id);
    for (const query of unitVectors(10, 32, random)) {
      const { found } = expectTopK(index, vectors, query, 25);
      expect(found.every((match) => match.id % 2 === 1)).toBe(true);
    }
  });

  it('replaces the vector of an id added again', () => {
    const [first, second] = unitVectors(2, 16, seededRandom(5));
    const index = createVectorIndex();
    index.add(9, first!);
    index.add(9, second!);
    expect(index.size).toBe(1);
    expect(index.search(second!, 1)).toEqual([{ id: 9, score: expect.closeTo(1, 2) }]);
  });

  it('returns only vectors that pass the filter, the best k of them even when few pass', () => {
    const random = seededRandom(13);
    const vectors = new Map(unitVectors(candidatePool * 5, 48, random).map((vector, id) => [id, vector] as const));
    const index = createVectorIndex();
    for (const [id, vector] of vectors) index.add(id, vector);
    const rare = (id: number) => id % 97 === 0;
    const common = (id: number) => id % 3 !== 0;
    for (const query of unitVectors(10, 48, random)) {
      const { found, reference } = expectTopK(index, vectors, query, 10, rare);
      // Fewer pass than the pool holds, so every one of them is scored: the reference's set, but for a near tie at the edge.
      expect(found.filter((match) => reference.some((entry) => entry.id === match.id)).length).toBeGreaterThanOrEqual(9);
      expectTopK(index, vectors, query, 10, common);
    }
    expect(index.search(vectors.get(0)!, 5, () => false)).toEqual([]);
  });

  it('takes vectors of one length only, until it is empty again', () => {
    const index = createVectorIndex();
    expect(index.search(new Float32Array(8), 3)).toEqual([]);
    index.add(1, new Float32Array(8).fill(0.25));
    expect(() => index.add(2, new Float32Array(16))).toThrow(RangeError);
    expect(() => index.search(new Float32Array(16), 3)).toThrow(RangeError);
    index.remove(1);
    expect(index.dimensions).toBeUndefined();
    index.add(2, new Float32Array(16).fill(0.25));
    expect(index.dimensions).toBe(16);
    expect(index.search(new Float32Array(16).fill(0.25), 0)).toEqual([]);
  });
});
