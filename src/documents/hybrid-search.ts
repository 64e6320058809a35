import type { Db } from '../store/database.ts';
import { matchCount, matchPassages, type LibraryReach } from '../store/documents-repository.ts';
import type { Embedder } from './embedder.ts';
import { ftsTerms } from './fts-query.ts';
import type { PassageVectors } from './passage-vectors.ts';

/** Reciprocal rank fusion's constant: a passage's share from one ranking is 1 / (k + its rank). */
const fusionK = 60;
/** How many each ranking offers to the fusion. */
const candidates = 50;
/**
 * The most matches BM25 ranks: it scores every match before taking the best, about 2 µs each on a
 * small machine, so a word in most of 100,000 passages would take 200 ms or more, and it tells
 * little of what a passage is about anyway. The rarest words are ranked, up to this many matches.
 */
const rankedMatches = 15_000;

export interface HybridSearchInput {
  db: Db;
  vectors: PassageVectors;
  /** Undefined while the embeddings backend is known to be unreachable: the words alone answer. */
  embedder: Embedder | undefined;
  reach: LibraryReach;
  /** Whether the searcher may read the document (the vectors' filter; the words' is `reach`). */
  mayRead: (documentId: string) => boolean;
  query: string;
  limit: number;
  signal?: AbortSignal;
  /** How long the question's embedding may take before the words alone answer. */
  embedTimeoutMs: number;
}

export interface FusedPassage {
  id: number;
  score: number;
}

export interface HybridSearchOutcome {
  passages: FusedPassage[];
  /** Why only the words were searched, when the vectors could not be. */
  vectorProblem?: string;
}

/** BM25 over the passages' words and the nearest vectors to the question, fused by rank. */
export async function hybridSearch(input: HybridSearchInput): Promise<HybridSearchOutcome> {
  const nearestAnswer = nearestPassages(input);
  const terms = await termsToRank(input.db, input.query);
  const nearest = await nearestAnswer;
  // When even the rarest word is too common to rank quickly, the vectors answer alone; without them, it is ranked however long it takes.
  const expression = terms.chosen.length > 0 ? terms.chosen.join(' OR ') : nearest.ids.length === 0 ? terms.rarest : undefined;
  const words = expression === undefined ? [] : await matchPassages(input.db, expression, input.reach, candidates);
  const passages = fuseRanks([words, nearest.ids]).slice(0, input.limit);
  return { passages, ...(nearest.problem !== undefined && { vectorProblem: nearest.problem }) };
}

/** The question's rarest words, as many as keep the matches to rank within `rankedMatches`, and the rarest one of all. */
async function termsToRank(db: Db, query: string): Promise<{ chosen: string[]; rarest?: string }> {
  const counted = [];
  for (const term of ftsTerms(query)) counted.push({ term, count: await matchCount(db, term, rankedMatches + 1) });
  const present = counted.filter(({ count }) => count > 0).sort((first, second) => first.count - second.count);
  const chosen: string[] = [];
  let matches = 0;
  for (const { term, count } of present) {
    if (matches + count > rankedMatches) break;
    chosen.push(term);
    matches += count;
  }
  return { chosen, ...(present[0] && { rarest: present[0].term }) };
}

async function nearestPassages(input: HybridSearchInput): Promise<{ ids: number[]; problem?: string }> {
  if (input.vectors.size === 0) return { ids: [] };
  if (!input.embedder) return { ids: [], problem: 'the embeddings backend is unreachable' };
  const timeout = AbortSignal.timeout(input.embedTimeoutMs);
  const signal = input.signal ? AbortSignal.any([input.signal, timeout]) : timeout;
  const result = await input.embedder.embed([input.query], signal);
  if (!result.success) return { ids: [], problem: result.error };
  const query = result.vectors[0];
  if (!query) return { ids: [], problem: 'the embeddings backend answered no vector' };
  // A passage whose vector is at a right angle to the question's, or turned away, is not near it.
  const near = input.vectors.search(query, candidates, input.mayRead).filter((match) => match.score > 0);
  return { ids: near.map((match) => match.id) };
}

/** Reciprocal rank fusion: each ranking gives a passage 1 / (60 + its rank), the sum orders them. */
export function fuseRanks(rankings: readonly (readonly number[])[]): FusedPassage[] {
  const scores = new Map<number, number>();
  for (const ranking of rankings) {
    ranking.forEach((id, index) => scores.set(id, (scores.get(id) ?? 0) + 1 / (fusionK + index + 1)));
  }
  return [...scores].map(([id, score]) => ({ id, score })).sort((first, second) => second.score - first.score || first.id - second.id);
}
