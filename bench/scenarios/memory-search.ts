// Scenario 12: the memory_search tool over one person's 10,000 facts in a real SQLite file (FTS5,
// BM25), beside another person's 10,000 it must pass over, in this process. The facts are built from a deterministic vocabulary of 3,000 made-up words, so
// terms are about as varied as a real person's facts; queries mix common and rare words, and
// a share of them cannot be parsed by FTS5 and take the LIKE fallback.
import path from 'node:path';
import { openDatabase } from '../../src/store/database.ts';
import { upsertFact } from '../../src/store/memory-repository.ts';
import { createMemorySearchTool } from '../../src/tools/builtin/memory-search.ts';
import type { ScenarioResult } from '../report.ts';
import { makeTemporaryDirectory, removeTemporaryDirectory } from '../temporary-directories.ts';
import { median } from '../statistics.ts';
import { medianAndP95, toolContext } from './tool-calls.ts';
import { seededRandom } from '../../test/support/seeded-random.ts';

const factCount = 10_000;
const queryCount = 500;
const budgetMs = 5;
const searcher = 'person-searching';
const someoneElse = 'person-elsewhere';
const categories = ['preferences', 'people', 'places', 'projects', 'environment', 'devices', 'health', 'work'];

function vocabulary(random: () => number, size: number): string[] {
  const syllables = ['ka', 'lo', 'mi', 'ne', 'ru', 'sa', 'to', 'vi', 'dan', 'pel', 'sor', 'tin', 'mar', 'ost', 'el', 'ur'];
  const words = new Set<string>();
  while (words.size < size) {
    const length = 2 + Math.floor(random() * 3);
    words.add(Array.from({ length }, () => syllables[Math.floor(random() * syllables.length)]).join(''));
  }
  return [...words];
}

export async function memorySearchTimes(): Promise<ScenarioResult> {
  const directory = await makeTemporaryDirectory('hearth-bench-memory-');
  const db = await openDatabase(path.join(directory, 'hearth.db'));
  try {
    const random = seededRandom(42);
    const words = vocabulary(random, 3_000);
    // Word frequencies follow a rough power law, as in real text.
    const word = () => words[Math.floor(words.length * random() ** 2.5)]!;
    const phrase = (count: number) => Array.from({ length: count }, word).join(' ');
    // One transaction for the setup: 20,000 commits of their own would take minutes on a busy disk.
    await db.transaction().execute(async (transaction) => {
      for (const personId of [searcher, someoneElse]) {
        for (let index = 0; index < factCount; index++) {
          await upsertFact(transaction, personId, { category: categories[index % categories.length]!, key: `${word()}_${index}`, value: phrase(6 + Math.floor(random() * 10)) });
        }
      }
    });
    const queries = Array.from({ length: queryCount }, (_, index) => (index % 10 === 9 ? `"${word()} (${word()}` : phrase(1 + (index % 3))));
    const tool = createMemorySearchTool(db, async () => ({ ok: true, personId: searcher }));
    const context = toolContext('bench-memory', new AbortController().signal);
    for (const query of queries.slice(0, 50)) await tool.execute({ query }, context);
    const times: number[] = [];
    let failures = 0;
    for (const query of queries) {
      const started = performance.now();
      const result = await tool.execute({ query }, context);
      times.push(performance.now() - started);
      if (typeof result !== 'string' && result.success === false) failures++;
    }
    const medianMs = median(times);
    return {
      rows: [
        {
          scenario: "12. `memory_search` over one person's 10,000 facts (of 20,000)",
          measured: `${medianAndP95(times, 2)}; ${queryCount} queries (1–3 words, every tenth one unparseable by FTS5)${failures ? `, ${failures} failed` : ''}`,
          target: `median < ${budgetMs} ms`,
          passed: medianMs < budgetMs && failures === 0,
        },
      ],
      details: [
        `12. memory_search: ${factCount.toLocaleString('en')} facts of one person and as many of another's, each of 6–15 words from a 3,000-word made-up vocabulary with power-law frequencies, in a real SQLite file with the FTS5 index; timed through the tool's execute() after 50 warm-up queries.`,
      ],
    };
  } finally {
    await db.destroy();
    await removeTemporaryDirectory(directory);
  }
}
