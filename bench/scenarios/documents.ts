// Scenarios 28-30: the documents library (src/documents/) in this process on a real SQLite file, with
// an embedder that hands out vectors made before the timing starts, so no embedding time is counted.
// 28 adds Markdown documents through the library and times them to `ready` (read, split, stored with
// their full-text index, vectors stored and put in the index). 29 times a hybrid search (BM25 and the
// vector index, fused by rank) over 100,000 passages of 768 dimensions; 30 is the RSS of a process
// that holds that library with its vectors loaded (bench/documents-library-process.ts).
import { fork } from 'node:child_process';
import path from 'node:path';
import { parseConfig } from '../../src/config.ts';
import { Documents } from '../../src/documents/document-library.ts';
import { createDocumentExtractor } from '../../src/documents/extract/extract-document.ts';
import { Household } from '../../src/household/household.ts';
import type { Person } from '../../src/people/person.ts';
import { openDatabase, type Db } from '../../src/store/database.ts';
import { vectorBytes } from '../../src/store/documents-repository.ts';
import { insertPerson } from '../../src/store/people-repository.ts';
import { benchEmbeddingModel, PrecomputedEmbedder } from '../precomputed-embedder.ts';
import { projectRoot } from '../project-root.ts';
import type { ScenarioResult } from '../report.ts';
import { makeTemporaryDirectory, removeTemporaryDirectory } from '../temporary-directories.ts';
import { median, percentile } from '../statistics.ts';
import { medianAndP95 } from './tool-calls.ts';
import { seededRandom } from '../../test/support/seeded-random.ts';

const benchDimensions = 768;
const indexedDocuments = 200;
const sectionsPerDocument = 50;
const searchedDocuments = 2_000;
const passagesPerDocument = 50;
const queryCount = 200;
const hybridBudgetMs = 50;
const silentLogger = { info: () => {}, warn: () => {}, error: () => {}, debug: () => {} } as never;

/** The jail Hearth would build here (for the extractor), probed only when a documents scenario runs. */
async function benchJail(directory: string) {
  const { jailFor } = await import('../../test/support/jail.ts');
  return jailFor(parseConfig({ DATA_DIR: directory }));
}

function unit(vector: Float32Array): Float32Array {
  let sum = 0;
  for (const value of vector) sum += value * value;
  const scale = 1 / Math.sqrt(sum);
  for (let index = 0; index < vector.length; index++) vector[index]! *= scale;
  return vector;
}

/**
 * Text and vectors shaped like a household's library: each document has its own words (a topic)
 * among a power-law vocabulary, and its passages' vectors lie around its own centre (cosine ~0.6
 * between passages of one document, ~0 across documents), as an embedding model's do.
 */
class SyntheticLibrary {
  private readonly random: () => number;
  private readonly words: string[];
  private readonly centres: Float32Array[] = [];
  private readonly topics: string[][] = [];

  constructor(seed: number, readonly documents: number) {
    this.random = seededRandom(seed);
    const syllables = ['ka', 'lo', 'mi', 'ne', 'ru', 'sa', 'to', 'vi', 'dan', 'pel', 'sor', 'tin', 'mar', 'ost', 'el', 'ur', 'ba', 'gre'];
    const words = new Set<string>();
    while (words.size < 6_000) words.add(Array.from({ length: 2 + Math.floor(this.random() * 3) }, () => syllables[Math.floor(this.random() * syllables.length)]).join(''));
    this.words = [...words];
    for (let document = 0; document < documents; document++) {
      this.centres.push(unit(Float32Array.from({ length: benchDimensions }, () => this.random() * 2 - 1)));
      this.topics.push(Array.from({ length: 12 }, () => this.words[1_000 + Math.floor(this.random() * 5_000)]!));
    }
  }

  private word(document: number): string {
    if (this.random() < 0.15) return this.topics[document]![Math.floor(this.random() * 12)]!;
    return this.words[Math.floor(this.words.length * this.random() ** 2.5)]!;
  }

  /** About 900 characters, as the splitter's passages are. */
  passageText(document: number): string {
    return Array.from({ length: 130 }, () => this.word(document)).join(' ');
  }

  /** A vector near the document's centre: a passage of it, or a question about it. */
  vectorNear(document: number): Float32Array {
    const centre = this.centres[document]!;
    const noise = 1.7 / Math.sqrt(benchDimensions);
    return unit(Float32Array.from(centre, (value) => value + (this.random() * 2 - 1) * noise));
  }

  question(document: number): string {
    const topic = this.topics[document]!;
    return [topic[Math.floor(this.random() * 12)], this.word(document), topic[Math.floor(this.random() * 12)]].join(' ');
  }
}

async function householdOf(db: Db): Promise<{ owner: Person; otherAdult: Person }> {
  const owner = await new Household(db).firstOwner();
  const otherAdult = await insertPerson(db, { name: 'Another adult', role: 'adult', passphraseHash: null });
  return { owner, otherAdult };
}

function markdownDocument(library: SyntheticLibrary, document: number): string {
  const sections = Array.from({ length: sectionsPerDocument }, (_, section) => `## Section ${section + 1}\n\n${library.passageText(document)}\n`);
  return `# Document ${document + 1}\n\n${sections.join('\n')}`;
}

/** Scenario 28: Markdown documents added through the library, timed from the first add to the last `ready`. */
export async function documentIndexingThroughput(): Promise<ScenarioResult> {
  const directory = await makeTemporaryDirectory('hearth-bench-documents-');
  const db = await openDatabase(path.join(directory, 'hearth.db'));
  let library: Documents | undefined;
  try {
    const synthetic = new SyntheticLibrary(28, indexedDocuments);
    const { owner } = await householdOf(db);
    const files = Array.from({ length: indexedDocuments }, (_, document) => Buffer.from(markdownDocument(synthetic, document)));
    const pool = Array.from({ length: 4_096 }, (_, index) => synthetic.vectorNear(index % indexedDocuments));
    library = await Documents.open({
      db,
      documentsDir: path.join(directory, 'documents'),
      maxBytes: 10 * 1024 * 1024,
      extractor: createDocumentExtractor({ jail: await benchJail(directory) }),
      embedder: new PrecomputedEmbedder(pool),
      logger: silentLogger,
    });
    library.start();
    const ready = new Set<string>();
    let failed = 0;
    let passages = 0;
    const allReady = new Promise<void>((resolve) => {
      library!.on((event) => {
        if (event.type !== 'document_status' || ready.has(event.document.id)) return;
        if (event.document.status === 'failed') failed++;
        if (event.document.status !== 'ready' && event.document.status !== 'failed') return;
        ready.add(event.document.id);
        passages += event.document.passages ?? 0;
        if (ready.size === indexedDocuments) resolve();
      });
    });
    const caller = { person: owner } as never;
    const started = performance.now();
    const cpuStarted = process.cpuUsage();
    for (const [index, content] of files.entries()) {
      const added = await library.add({ caller, library: 'household', name: `document-${index + 1}.md`, content, source: 'rest' });
      if (!added.ok) throw new Error(`document ${index + 1} was refused: ${added.message}`);
    }
    await allReady;
    const seconds = (performance.now() - started) / 1000;
    const cpu = process.cpuUsage(cpuStarted);
    const perSecond = passages / seconds;
    return {
      rows: [
        {
          scenario: '28. Document indexing throughput, embedding excluded',
          measured: `${Math.round(perSecond).toLocaleString('en-US')} passages/s (${passages.toLocaleString('en-US')} passages of ${indexedDocuments} Markdown documents in ${seconds.toFixed(1)} s, ${((cpu.user + cpu.system) / 1e6).toFixed(1)} s CPU)${failed ? `; ${failed} failed` : ''}`,
          target: '',
          passed: failed === 0 ? undefined : false,
        },
      ],
      details: [
        `28. Document indexing: ${indexedDocuments} Markdown documents of ${sectionsPerDocument} sections (~900 characters each) added through Documents.add in this process on a temp SQLite file, timed from the first add to the last document's \`ready\` event: read by the real extractor, split, stored with their FTS5 index, embedded in batches of 32 by an embedder that hands out 768-dimensional vectors made before the timing, stored as float32 blobs and put in the vector index.`,
      ],
    };
  } finally {
    await library?.stop();
    await db.destroy();
    await removeTemporaryDirectory(directory);
  }
}

/** Writes 100,000 passages with their vectors straight into a library's tables (as indexing would have left them). */
async function fillLibrary(db: Db, synthetic: SyntheticLibrary, people: { owner: Person; otherAdult: Person }, documentsDir: string): Promise<void> {
  const addedAt = new Date(0).getTime();
  for (let document = 0; document < searchedDocuments; document++) {
    const id = `00000000-0000-4000-8000-${String(document).padStart(12, '0')}`;
    // Three in five are the household's, one the searcher's own, one another adult's (which the search must pass over).
    const shelf = document % 5;
    const owner = shelf === 3 ? people.owner.id : shelf === 4 ? people.otherAdult.id : null;
    await db.transaction().execute(async (transaction) => {
      await transaction
        .insertInto('documents')
        .values({
          id,
          name: `document-${document + 1}.md`,
          library: owner === null ? 'household' : 'mine',
          owner_person_id: owner,
          added_by: owner ?? people.owner.id,
          media_type: 'text/markdown',
          size: passagesPerDocument * 900,
          pages: null,
          passages: passagesPerDocument,
          status: 'ready',
          progress: null,
          error: null,
          added_at: new Date(addedAt + document * 1000).toISOString(),
          source: 'rest',
          stored_path: path.join(documentsDir, id),
          source_path: null,
          embedding_model: benchEmbeddingModel,
          content_hash: id,
        })
        .execute();
      const rows = Array.from({ length: passagesPerDocument }, (_, ordinal) => ({
        document_id: id,
        ordinal,
        page: null,
        heading: `Document ${document + 1} › Section ${ordinal + 1}`,
        text: synthetic.passageText(document),
        vector: vectorBytes(synthetic.vectorNear(document)),
        embedding_model: benchEmbeddingModel,
      }));
      await transaction.insertInto('document_passages').values(rows).execute();
    });
  }
}

/** Scenarios 29 and 30: a hybrid search over 100,000 passages, and the RSS of a process holding them. */
export async function documentSearchAtScale(): Promise<ScenarioResult> {
  const directory = await makeTemporaryDirectory('hearth-bench-documents-');
  const databaseFile = path.join(directory, 'hearth.db');
  const documentsDir = path.join(directory, 'documents');
  let db = await openDatabase(databaseFile);
  let library: Documents | undefined;
  try {
    const synthetic = new SyntheticLibrary(29, searchedDocuments);
    const people = await householdOf(db);
    const filling = performance.now();
    await fillLibrary(db, synthetic, people, documentsDir);
    const fillSeconds = (performance.now() - filling) / 1000;
    // Questions about documents the searcher may read (not the other adult's).
    const askedAbout = Array.from({ length: queryCount + 20 }, (_, index) => (index * 37) % searchedDocuments).filter((document) => document % 5 !== 4);
    const questions = askedAbout.map((document) => ({ document, text: synthetic.question(document), vector: synthetic.vectorNear(document) }));
    const embedder = new PrecomputedEmbedder([], new Map(questions.map((question) => [question.text, question.vector])));
    await db.destroy();
    db = await openDatabase(databaseFile);

    const opened = performance.now();
    // Every document is ready: nothing is read.
    const extractor = { extract: async () => ({ success: false as const, error: 'not read in this scenario' }) };
    library = await Documents.open({ db, documentsDir, maxBytes: 1, extractor, embedder, logger: silentLogger });
    library.start();
    const caller = { person: people.owner };
    // The first search waits for the vectors to be loaded.
    await library.search(caller, questions[0]!.text);
    const loadSeconds = (performance.now() - opened) / 1000;
    const vectorCount = library.vectorCount;
    for (const question of questions.slice(1, 20)) await library.search(caller, question.text);
    const times: number[] = [];
    const cpuTimes: number[] = [];
    let firstRight = 0;
    let inFive = 0;
    for (const question of questions.slice(20)) {
      const started = performance.now();
      const cpuStarted = process.cpuUsage();
      const results = await library.search(caller, question.text, { limit: 8 });
      const cpu = process.cpuUsage(cpuStarted);
      times.push(performance.now() - started);
      cpuTimes.push((cpu.user + cpu.system) / 1000);
      const documentIds = results.map((result) => Number(result.document_id.slice(-12)));
      if (documentIds[0] === question.document) firstRight++;
      if (documentIds.slice(0, 5).includes(question.document)) inFive++;
    }
    await library.stop();
    library = undefined;
    await db.destroy();

    const rss = await libraryProcessRss(databaseFile, documentsDir, questions[0]!.text, questions[0]!.vector);
    const searched = times.length;
    const medianMs = median(times);
    return {
      rows: [
        {
          scenario: '29. Hybrid document search over 100,000 passages (768 dimensions)',
          measured: `${medianAndP95(times)} (CPU median ${median(cpuTimes).toFixed(1)} ms, p95 ${percentile(cpuTimes, 0.95).toFixed(1)} ms); ${searched} questions, the asked-about document first for ${firstRight}, in the first 5 for ${inFive}`,
          target: `median < ${hybridBudgetMs} ms`,
          passed: medianMs < hybridBudgetMs,
        },
        {
          scenario: '30. RSS with the 100,000-passage library loaded',
          measured: `${rss.loadedMb.toFixed(0)} MB (${rss.baselineMb.toFixed(0)} MB before the library was opened, so +${(rss.loadedMb - rss.baselineMb).toFixed(0)} MB; the vector index itself ${(rss.indexBytes / 2 ** 20).toFixed(0)} MB for ${rss.vectors.toLocaleString('en-US')} vectors, loaded in ${rss.loadSeconds.toFixed(1)} s; V8 heap ${rss.heapMb.toFixed(0)} MB, external ${rss.externalMb.toFixed(0)} MB)`,
          target: '',
          passed: undefined,
        },
      ],
      details: [
        `29. Hybrid search: ${searchedDocuments.toLocaleString('en-US')} Markdown documents of ${passagesPerDocument} passages (~900 characters of words from a 6,000-word made-up vocabulary with power-law frequencies, each document with 12 words of its own), ${vectorCount.toLocaleString('en-US')} vectors of ${benchDimensions} dimensions around each document's centre, written straight into a temp SQLite file (${fillSeconds.toFixed(0)} s) and opened by Documents (its vectors loaded in ${loadSeconds.toFixed(1)} s). Three in five documents are the household's, one the searcher's own and one another adult's, which the search passes over. Each question is three words (two of its document's own) with a precomputed vector near that document's centre, so embedding takes no time; timed through Documents.search (FTS5 BM25 top 50 and the vector index's top 50, fused by rank, the passages read back) after 20 warm-up questions.`,
        `30. RSS: VmRSS of a child process (bench/documents-library-process.ts) that opens the same file, starts the library, waits for its first search (vectors loaded) and a garbage collection; the baseline is the same process after opening the database and before opening the library.`,
      ],
    };
  } finally {
    await library?.stop();
    await db.destroy().catch(() => undefined);
    await removeTemporaryDirectory(directory);
  }
}

interface LibraryProcessReport {
  baselineMb: number;
  loadedMb: number;
  /** V8's heap in use and the memory of typed arrays and buffers outside it, once loaded. */
  heapMb: number;
  externalMb: number;
  vectors: number;
  indexBytes: number;
  loadSeconds: number;
}

function libraryProcessRss(databaseFile: string, documentsDir: string, question: string, vector: Float32Array): Promise<LibraryProcessReport> {
  return new Promise((resolve, reject) => {
    const child = fork(path.join(projectRoot, 'bench', 'documents-library-process.ts'), [databaseFile, documentsDir], {
      execArgv: ['--import', 'tsx', '--expose-gc'],
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    child.once('message', (message) => resolve(message as LibraryProcessReport));
    child.once('error', reject);
    child.once('exit', (code) => reject(new Error(`the library process exited with ${code} before reporting`)));
    child.send({ question, vector: Array.from(vector) });
  });
}
