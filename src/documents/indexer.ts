import { setImmediate as nextTurn } from 'node:timers/promises';
import { messageOf } from '../failure.ts';
import type { Logger } from '../logger.ts';
import type { Db } from '../store/database.ts';
import {
  embeddedCount,
  passagesToEmbed,
  storePassages,
  storeVectors,
  updateDocument,
  type DocumentRow,
} from '../store/documents-repository.ts';
import type { Embedder } from './embedder.ts';
import type { DocumentExtractor } from './extract/extract-document.ts';
import type { PassageVectors } from './passage-vectors.ts';
import { indexedText, splitIntoPassages } from './passages.ts';

export interface RetryDelays {
  /** After the first failure to reach the embeddings backend. */
  firstMs: number;
  /** The longest wait, reached by doubling. */
  maxMs: number;
}

export interface IndexerOptions {
  db: Db;
  extractor: DocumentExtractor;
  embedder: Embedder;
  vectors: PassageVectors;
  /** Told of every row the indexer changes. */
  changed: (row: DocumentRow) => void;
  logger: Logger;
  /** Passages embedded in one call (and stored in one transaction) before yielding to other work. */
  batchSize?: number;
  retry?: RetryDelays;
}

const defaultRetry: RetryDelays = { firstMs: 5_000, maxMs: 300_000 };
const bugPauseMs = 30_000;
/** About 30 ms of inserting passages and their index entries on a small machine, between turns of the event loop. */
const passagesPerTransaction = 64;

/** Where the next document to work on is chosen from: one waiting to be read first, then one waiting for vectors. */
async function nextToSplit(db: Db): Promise<DocumentRow | undefined> {
  return db.selectFrom('documents').selectAll().where('status', 'in', ['queued', 'indexing']).where('passages', 'is', null).orderBy('added_at').orderBy('id').limit(1).executeTakeFirst();
}

async function nextToEmbed(db: Db, model: string): Promise<DocumentRow | undefined> {
  return db
    .selectFrom('documents')
    .selectAll()
    .where('passages', 'is not', null)
    .where((where) =>
      where.or([
        where('status', '=', 'indexing'),
        where.and([where('status', '=', 'ready'), where.or([where('embedding_model', 'is', null), where('embedding_model', '!=', model)])]),
      ]),
    )
    .orderBy('added_at')
    .orderBy('id')
    .limit(1)
    .executeTakeFirst();
}

/**
 * Reads, splits and embeds documents in the background, one at a time: queued → indexing (read,
 * split and stored, then embedded a batch at a time, yielding between batches) → ready, or failed
 * when the file cannot be read. Its state is the documents' rows, so a restart carries on where
 * it stopped (the vectors stored are kept), and a document whose vectors are of another model
 * than the embedder's is embedded again. While the embeddings backend cannot be reached a
 * document waits, saying why, and is tried again later (doubling the wait).
 */
export class DocumentIndexer {
  private readonly batchSize: number;
  private readonly retry: RetryDelays;
  private running?: Promise<void>;
  private stopped = false;
  private woken = false;
  private wake?: () => void;
  private current?: { documentId: string; controller: AbortController };
  private unreachable?: { until: number; delayMs: number };

  constructor(private readonly options: IndexerOptions) {
    this.batchSize = options.batchSize ?? 32;
    this.retry = options.retry ?? defaultRetry;
  }

  start(): void {
    this.running ??= this.loop();
  }

  /** There is new work (a document was added). */
  nudge(): void {
    this.woken = true;
    this.wake?.();
  }

  /** Stops working on the document now: it is being deleted. */
  forget(documentId: string): void {
    if (this.current?.documentId === documentId) this.current.controller.abort();
  }

  /** Whether the embeddings backend was found unreachable and is not yet due to be tried again. */
  embeddingsUnreachable(): boolean {
    return this.unreachable !== undefined && Date.now() < this.unreachable.until;
  }

  /** Ends the work in hand (it resumes at the next start) and the loop. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.current?.controller.abort();
    this.nudge();
    await this.running;
  }

  private async loop(): Promise<void> {
    while (!this.stopped) {
      this.woken = false;
      let pauseMs: number | undefined;
      try {
        if (await this.step()) continue;
        if (this.unreachable) pauseMs = Math.max(0, this.unreachable.until - Date.now());
      } catch (error) {
        this.options.logger.error({ err: error }, 'documents: indexing failed; trying again in 30 s');
        pauseMs = bugPauseMs;
      }
      if (!this.woken && !this.stopped) await this.idle(pauseMs);
    }
  }

  /** Waits for a nudge, or `pauseMs` when given. */
  private idle(pauseMs: number | undefined): Promise<void> {
    return new Promise((resolve) => {
      const timer = pauseMs === undefined ? undefined : setTimeout(done, pauseMs);
      timer?.unref();
      const self = this;
      function done(): void {
        clearTimeout(timer);
        self.wake = undefined;
        resolve();
      }
      this.wake = done;
    });
  }

  /** Does one piece of work; false when there was none to do now. */
  private async step(): Promise<boolean> {
    const { db, embedder } = this.options;
    const toSplit = await nextToSplit(db);
    if (toSplit) {
      await this.working(toSplit.id, (signal) => this.splitOrFail(toSplit, signal));
      return true;
    }
    if (this.embeddingsUnreachable()) return false;
    const toEmbed = await nextToEmbed(db, embedder.model);
    if (!toEmbed) return false;
    await this.working(toEmbed.id, (signal) => this.embed(toEmbed, signal));
    return true;
  }

  private async working(documentId: string, work: (signal: AbortSignal) => Promise<void>): Promise<void> {
    const controller = new AbortController();
    this.current = { documentId, controller };
    try {
      await work(controller.signal);
    } finally {
      this.current = undefined;
    }
  }

  private async update(id: string, change: Partial<Omit<DocumentRow, 'id'>>): Promise<DocumentRow | undefined> {
    const row = await updateDocument(this.options.db, id, change);
    if (row) this.options.changed(row);
    return row;
  }

  /** A bug that one file sets off fails that document rather than stopping the queue at it. */
  private async splitOrFail(document: DocumentRow, signal: AbortSignal): Promise<void> {
    try {
      await this.split(document, signal);
    } catch (error) {
      this.options.logger.error({ err: error, documentId: document.id }, 'documents: reading a document failed');
      await this.update(document.id, { status: 'failed', progress: null, error: `Hearth failed reading ${document.name} (an error of its own, in its log): ${messageOf(error)}` });
    }
  }

  private async split(document: DocumentRow, signal: AbortSignal): Promise<void> {
    if (!(await this.update(document.id, { status: 'indexing', progress: 0, error: null }))) return;
    const result = await this.options.extractor.extract({ path: document.stored_path, name: document.name, mediaType: document.media_type }, signal);
    if (signal.aborted) return;
    if (!result.success) {
      await this.update(document.id, { status: 'failed', progress: null, error: result.error });
      return;
    }
    const passages = splitIntoPassages(result.document);
    if (passages.length === 0) {
      await this.update(document.id, { status: 'failed', progress: null, error: `${document.name} has no text to read.` });
      return;
    }
    const stored = await storePassages(this.options.db, document.id, passages, result.document.pages, { chunk: passagesPerTransaction, pause: () => nextTurn() });
    if (stored) this.options.changed(stored);
  }

  private async embed(document: DocumentRow, signal: AbortSignal): Promise<void> {
    const { db, embedder, vectors } = this.options;
    const total = document.passages ?? 0;
    let done = await embeddedCount(db, document.id, embedder.model);
    if (document.status !== 'indexing') {
      if (!(await this.update(document.id, { status: 'indexing', progress: fraction(done, total) }))) return;
    }
    for (;;) {
      const batch = await passagesToEmbed(db, document.id, embedder.model, this.batchSize);
      if (signal.aborted) return;
      if (batch.length === 0) break;
      const result = await embedder.embed(batch.map(indexedText), signal);
      if (signal.aborted) return;
      if (!result.success) {
        await this.embeddingsFailed(document.id, result.error);
        return;
      }
      this.unreachable = undefined;
      const embedded = batch.map((passage, index) => ({ id: passage.id, vector: result.vectors[index]! }));
      const stored = new Set(await storeVectors(db, embedder.model, embedded));
      // Deleted meanwhile: its vectors must not outlive it in memory.
      if (signal.aborted) return;
      for (const { id, vector } of embedded) if (stored.has(id)) vectors.add(document.id, id, vector);
      done += stored.size;
      if (!(await this.update(document.id, { progress: fraction(done, total), error: null }))) return;
      await nextTurn();
      if (signal.aborted) return;
    }
    await this.update(document.id, { status: 'ready', progress: null, error: null, embedding_model: embedder.model });
  }

  private async embeddingsFailed(documentId: string, error: string): Promise<void> {
    const delayMs = this.unreachable ? Math.min(this.unreachable.delayMs * 2, this.retry.maxMs) : this.retry.firstMs;
    this.unreachable = { until: Date.now() + delayMs, delayMs };
    this.options.logger.warn({ documentId }, `documents: the embeddings backend failed (${error}); trying again in ${Math.round(delayMs / 1000)} s`);
    await this.update(documentId, {
      error: `Waiting for the embeddings backend (EMBEDDING_MODEL ${this.options.embedder.model}): ${error}. Indexing goes on once it answers; until then search finds this document by its words.`,
    });
  }
}

function fraction(done: number, total: number): number {
  return total === 0 ? 1 : Math.min(1, done / total);
}
