// Scenario 30's process: opens a documents library over the file it is given, waits for its vectors
// to be loaded (its first search), and reports its VmRSS, before and after, over IPC.
import { readFileSync } from 'node:fs';
import { Documents } from '../src/documents/document-library.ts';
import { Household } from '../src/household/household.ts';
import { openDatabase } from '../src/store/database.ts';
import { PrecomputedEmbedder } from './precomputed-embedder.ts';

const [databaseFile, documentsDir] = process.argv.slice(2) as [string, string];
const silentLogger = { info: () => {}, warn: () => {}, error: () => {}, debug: () => {} } as never;

/** VmRSS once garbage is collected (twice, a turn apart: array buffers are freed by a task of their own). */
async function residentMb(): Promise<number> {
  global.gc?.();
  await new Promise((resolve) => setTimeout(resolve, 100));
  global.gc?.();
  const kilobytes = Number(/VmRSS:\s+(\d+)/.exec(readFileSync('/proc/self/status', 'utf8'))?.[1]);
  return kilobytes / 1024;
}

process.once('message', async (message: { question: string; vector: number[] }) => {
  const db = await openDatabase(databaseFile);
  const owner = await new Household(db).firstOwner();
  const baselineMb = await residentMb();
  const started = performance.now();
  const library = await Documents.open({
    db,
    documentsDir,
    maxBytes: 1,
    // Every document is ready: nothing is read.
    extractor: { extract: async () => ({ success: false, error: 'not read in this process' }) },
    embedder: new PrecomputedEmbedder([], new Map([[message.question, Float32Array.from(message.vector)]])),
    logger: silentLogger,
  });
  library.start();
  await library.search({ person: owner }, message.question);
  const loadSeconds = (performance.now() - started) / 1000;
  const loadedMb = await residentMb();
  const { heapUsed, external } = process.memoryUsage();
  const heapMb = heapUsed / 2 ** 20;
  const externalMb = external / 2 ** 20;
  process.send!({ baselineMb, loadedMb, heapMb, externalMb, vectors: library.vectorCount, indexBytes: library.vectorBytes, loadSeconds }, () => {
    void library.stop().then(() => db.destroy()).then(() => process.exit(0));
  });
});
