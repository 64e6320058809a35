// The embedding stand-ins' vectors: a feature-hashed bag of word stems, so texts that share
// words are near and the same text always gives the same vector, with no model at all.

export const defaultEmbeddingDimensions = 256;

/** Words that say nothing about what a passage is about; left out so they do not pull unrelated texts together. */
const stopWords = new Set(
  'a an and are as at be by do does for from has have how i if in is it its of on or our that the their this to was what when where which who why will with you your'.split(' '),
);

/** A crude stem: enough that "filters" and "filter", "cleaning" and "clean" share a bucket. */
export function wordStem(word: string): string {
  for (const suffix of ['ings', 'ing', 'ies', 'es', 'ed', 'ly', 's']) {
    if (word.length > suffix.length + 2 && word.endsWith(suffix)) return suffix === 'ies' ? `${word.slice(0, -3)}y` : word.slice(0, -suffix.length);
  }
  return word;
}

export function wordStems(text: string): string[] {
  const words = text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
  return words.filter((word) => !stopWords.has(word)).map(wordStem);
}

/** 32-bit FNV-1a of the stem's UTF-16 units. */
function hashOf(stem: string): number {
  let hash = 0x811c9dc5;
  for (let index = 0; index < stem.length; index++) {
    hash ^= stem.charCodeAt(index);
    hash = Math.imul(hash, 0x01000193);
  }
  return hash >>> 0;
}

/**
 * Each stem adds ±1 to one of `dimensions` buckets (bucket and sign from its hash), and the sum is
 * scaled to unit length; a text with no words gives the zero vector.
 */
export function hashedEmbedding(text: string, dimensions = defaultEmbeddingDimensions): number[] {
  const vector = new Array<number>(dimensions).fill(0);
  for (const stem of wordStems(text)) {
    const hash = hashOf(stem);
    vector[hash % dimensions]! += hash & 0x80000000 ? -1 : 1;
  }
  const length = Math.hypot(...vector);
  return length === 0 ? vector : vector.map((value) => value / length);
}
