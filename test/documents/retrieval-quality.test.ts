// Retrieval quality: fifty short household documents, twenty questions in the person's words;
// the right passage must be among the first five for at least eighteen of them. The vectors are
// the stand-in's hashed bags of words, so this holds the words (BM25) and the vectors to a floor,
// and the fusion of the two to both.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { LibraryBench } from '../support/document-library.ts';
import { householdDocuments, householdQuestions } from './household-corpus.ts';

let bench: LibraryBench;
beforeAll(async () => {
  bench = await LibraryBench.open();
  const added = [];
  for (const document of householdDocuments) {
    added.push(await bench.add('owner', document.name, `# ${document.heading}\n\n${document.text}\n`, 'household'));
  }
  for (const document of added) await bench.reaches(document.id, 'ready');
});
afterAll(async () => {
  await bench.close();
});

it('finds the right passage among the first five for at least 18 of 20 questions', async () => {
  expect(householdDocuments).toHaveLength(50);
  expect(householdQuestions).toHaveLength(20);
  const ranks: Record<string, number | undefined> = {};
  for (const { question, answer } of householdQuestions) {
    const results = await bench.library.search(bench.caller('adult'), question, { limit: 5 });
    const index = results.findIndex((result) => result.name === answer);
    ranks[question] = index < 0 ? undefined : index + 1;
  }
  const missed = Object.entries(ranks).filter(([, rank]) => rank === undefined).map(([question]) => question);
  const first = Object.values(ranks).filter((rank) => rank === 1).length;
  expect(missed.length, `missed: ${missed.join(' | ')}`).toBeLessThanOrEqual(2);
  // Most answers come first, not just somewhere in the five (measured: 15 fused, 17 by words alone,
  // 15 by the hashed vectors alone, whose collisions a real embedding model does not have).
  expect(first).toBeGreaterThanOrEqual(12);
});
