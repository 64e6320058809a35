import { createHash, randomUUID } from 'node:crypto';
import { mkdir, readdir, rm, writeFile } from 'node:fs/promises';
import { setImmediate as nextTurn } from 'node:timers/promises';
import path from 'node:path';
import { refusal, messageOf } from '../failure.ts';
import type { Logger } from '../logger.ts';
import type { Caller, Person } from '../people/person.ts';
import type { Db } from '../store/database.ts';
import { allDocuments, deleteDocument, insertDocument, passagesById, readPassages, vectorsOf, type DocumentRow } from '../store/documents-repository.ts';
import { mayDeleteDocument, maySeeDocument, whyNotAdd } from './document-rights.ts';
import type {
  AddDocumentResult,
  DocumentEvent,
  DocumentLibrary,
  DocumentPassage,
  DocumentSearchResult,
  DocumentSource,
  DocumentStatus,
  DocumentSummary,
  LibraryName,
} from './document-types.ts';
import type { Embedder } from './embedder.ts';
import { detectMediaType, documentMediaTypes, type DocumentExtractor } from './extract/extract-document.ts';
import { hybridSearch } from './hybrid-search.ts';
import { DocumentIndexer, type RetryDelays } from './indexer.ts';
import { PassageVectors } from './passage-vectors.ts';
import { createVectorIndex } from './vector-index.ts';

export interface DocumentLibraryOptions {
  db: Db;
  /** Where the originals are kept, each as a file named by its document's id. */
  documentsDir: string;
  /** The largest document accepted, in bytes (the upload limit). */
  maxBytes: number;
  extractor: DocumentExtractor;
  embedder: Embedder;
  logger: Logger;
  /** Passages embedded per call, and the waits while the embeddings backend is unreachable (tests shorten them). */
  indexing?: { batchSize?: number; retry?: RetryDelays };
  /** How long a search waits for its question's embedding before answering from words alone (5 s). */
  queryEmbedTimeoutMs?: number;
}

/** Who searches: enough to know whose libraries they may read (a tool's run has a person, not a request's credentials). */
export type Searcher = Pick<Caller, 'person'>;

const supportedMediaTypes = new Set<string>(Object.values(documentMediaTypes));
const maximumNameLength = 255;
const defaultSearchLimit = 8;
const maximumSearchLimit = 50;
const defaultPassageCount = 20;
const maximumPassageCount = 100;
const documentFileName = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/**
 * The household's documents and each person's own (docs/documents.md): added, indexed in the
 * background, searched by words and meaning together, opened at a passage and deleted. The rows
 * are kept in memory too (a household's few thousand), so listing answers at once; the passages'
 * vectors are loaded in the background at start.
 */
export class Documents implements DocumentLibrary {
  private readonly rows = new Map<string, DocumentRow>();
  /** Documents whose original is written but whose row is not yet: not stray files. */
  private readonly adding = new Set<string>();
  private readonly listeners = new Set<(event: DocumentEvent) => void>();
  private readonly vectors = new PassageVectors(createVectorIndex());
  private readonly indexer: DocumentIndexer;
  private vectorsLoaded: Promise<void> = Promise.resolve();

  private constructor(private readonly options: DocumentLibraryOptions) {
    this.indexer = new DocumentIndexer({
      db: options.db,
      extractor: options.extractor,
      embedder: options.embedder,
      vectors: this.vectors,
      changed: (row) => this.changed(row),
      logger: options.logger,
      ...options.indexing,
    });
  }

  /** Reads the documents' rows; `start` then loads their vectors and resumes indexing. */
  static async open(options: DocumentLibraryOptions): Promise<Documents> {
    const library = new Documents(options);
    for (const row of await allDocuments(options.db)) library.rows.set(row.id, row);
    return library;
  }

  start(): void {
    this.vectorsLoaded = this.loadVectors();
    void this.removeStrayFiles();
    this.indexer.start();
  }

  /** Ends the indexing in hand; it resumes at the next start. */
  async stop(): Promise<void> {
    await this.indexer.stop();
    await this.vectorsLoaded;
  }

  /** The vectors in memory, for the bench and `/health`-like reports. */
  get vectorCount(): number {
    return this.vectors.size;
  }

  /** The memory the vectors in memory take, in bytes. */
  get vectorBytes(): number {
    return this.vectors.bytes;
  }

  async add(input: { caller: Caller; library: LibraryName; name: string; mediaType?: string; content: Buffer; source: DocumentSource }): Promise<AddDocumentResult> {
    const { person } = input.caller;
    const refused = whyNotAdd(person, input.library);
    if (refused !== undefined) return refusal('forbidden', refused);
    const name = input.name.trim();
    if (name === '' || name.length > maximumNameLength || /\p{Cc}/u.test(name)) {
      return refusal('invalid_request', `Name the document with 1 to ${maximumNameLength} characters and no control characters.`);
    }
    if (input.content.length === 0) return refusal('invalid_request', `${name} is empty.`);
    if (input.content.length > this.options.maxBytes) {
      return refusal('too_large', `${name} is larger than the upload limit of ${Math.round(this.options.maxBytes / 1024 / 1024)} MB (SESSION_FILES_MAX_SIZE_MB).`);
    }
    const mediaType = detectMediaType(name, input.content.subarray(0, 1024)) ?? (input.mediaType !== undefined && supportedMediaTypes.has(input.mediaType) ? input.mediaType : undefined);
    if (mediaType === undefined) {
      return refusal('unsupported_type', `${name} is a kind of file Hearth does not read. It reads PDF (with a text layer), Word (.docx), HTML, Markdown, plain text and e-mail (.eml).`);
    }
    const id = randomUUID();
    const storedPath = path.join(this.options.documentsDir, id);
    const row: DocumentRow = {
      id,
      name,
      library: input.library,
      owner_person_id: input.library === 'mine' ? person.id : null,
      added_by: person.id,
      media_type: mediaType,
      size: input.content.length,
      pages: null,
      passages: null,
      status: 'queued',
      progress: null,
      error: null,
      added_at: new Date().toISOString(),
      source: input.source,
      stored_path: storedPath,
      source_path: null,
      embedding_model: null,
      content_hash: createHash('sha256').update(input.content).digest('hex'),
    };
    this.adding.add(id);
    try {
      await mkdir(this.options.documentsDir, { recursive: true, mode: 0o700 });
      await writeFile(storedPath, input.content, { flag: 'wx', mode: 0o600 });
      await insertDocument(this.options.db, row);
    } catch (error) {
      await rm(storedPath, { force: true });
      throw error;
    } finally {
      this.adding.delete(id);
    }
    this.rows.set(id, row);
    this.emit({ type: 'document_status', document: summaryOf(row) });
    this.indexer.nudge();
    return { ok: true, document: summaryOf(row) };
  }

  list(caller: Caller): DocumentSummary[] {
    return [...this.rows.values()]
      .filter((row) => maySeeDocument(caller.person, shelvedOf(row)))
      .sort((first, second) => second.added_at.localeCompare(first.added_at))
      .map(summaryOf);
  }

  get(caller: Caller, id: string): DocumentSummary | undefined {
    const row = this.visible(caller.person, id);
    return row && summaryOf(row);
  }

  async passages(caller: Caller, id: string, range: { from?: number; count?: number } = {}): Promise<DocumentPassage[] | undefined> {
    if (!this.visible(caller.person, id)) return undefined;
    const from = Math.max(0, Math.floor(range.from ?? 0));
    const count = Math.min(maximumPassageCount, Math.max(1, Math.floor(range.count ?? defaultPassageCount)));
    const rows = await readPassages(this.options.db, id, from, count);
    return rows.map(({ document_id, ordinal, page, heading, text }) => ({ document_id, ordinal, page, heading, text }));
  }

  original(caller: Caller, id: string): { path: string; name: string; mediaType: string } | undefined {
    const row = this.visible(caller.person, id);
    return row && { path: row.stored_path, name: row.name, mediaType: row.media_type };
  }

  mayDelete(caller: Caller, id: string): boolean {
    const row = this.rows.get(id);
    return row !== undefined && mayDeleteDocument(caller.person, shelvedOf(row));
  }

  async delete(caller: Caller, id: string): Promise<boolean> {
    const row = this.rows.get(id);
    if (!row || !mayDeleteDocument(caller.person, shelvedOf(row))) return false;
    // In this order: the indexer stops adding vectors before the ones it added are removed.
    this.indexer.forget(id);
    this.rows.delete(id);
    await deleteDocument(this.options.db, id);
    this.vectors.removeDocument(id);
    await rm(row.stored_path, { force: true });
    this.emit({ type: 'document_deleted', id, library: row.library as LibraryName, owner_person_id: row.owner_person_id });
    return true;
  }

  /** `householdOnly`: the household's library alone (a session shared with the household reads no one's own). */
  async search(caller: Searcher, query: string, options: { limit?: number; signal?: AbortSignal; householdOnly?: boolean } = {}): Promise<DocumentSearchResult[]> {
    const { person } = caller;
    if (person.role === 'guest' || query.trim() === '') return [];
    const mayRead = (documentId: string) => {
      const row = this.visible(person, documentId);
      return row !== undefined && (options.householdOnly !== true || row.library === 'household');
    };
    const limit = Math.min(maximumSearchLimit, Math.max(1, Math.floor(options.limit ?? defaultSearchLimit)));
    await this.vectorsLoaded;
    const { passages } = await hybridSearch({
      db: this.options.db,
      vectors: this.vectors,
      embedder: this.indexer.embeddingsUnreachable() ? undefined : this.options.embedder,
      reach: { personId: options.householdOnly === true ? null : person.id },
      mayRead,
      query,
      limit,
      embedTimeoutMs: this.options.queryEmbedTimeoutMs ?? 5_000,
      ...(options.signal && { signal: options.signal }),
    });
    const stored = new Map((await passagesById(this.options.db, passages.map((passage) => passage.id))).map((passage) => [passage.id, passage]));
    const results: DocumentSearchResult[] = [];
    for (const { id, score } of passages) {
      const passage = stored.get(id);
      const document = passage && mayRead(passage.document_id) ? this.rows.get(passage.document_id) : undefined;
      if (!passage || !document) continue;
      results.push({ document_id: document.id, name: document.name, page: passage.page, passage: passage.ordinal, heading: passage.heading, text: passage.text, score });
    }
    return results;
  }

  on(listener: (event: DocumentEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private visible(person: Person, id: string): DocumentRow | undefined {
    const row = this.rows.get(id);
    return row && maySeeDocument(person, shelvedOf(row)) ? row : undefined;
  }

  private changed(row: DocumentRow): void {
    // A row the indexer changed as it was being deleted is not brought back.
    if (!this.rows.has(row.id)) return;
    this.rows.set(row.id, row);
    this.emit({ type: 'document_status', document: summaryOf(row) });
  }

  private emit(event: DocumentEvent): void {
    for (const listener of this.listeners) {
      try {
        listener(event);
      } catch (error) {
        this.options.logger.error({ err: error }, 'a documents listener failed');
      }
    }
  }

  /** In the background from start: a search waits for it, so a failure is logged rather than left to reject unseen. */
  private async loadVectors(): Promise<void> {
    const model = this.options.embedder.model;
    try {
      for await (const batch of vectorsOf(this.options.db, model)) {
        for (const { id, document_id, vector } of batch) if (this.rows.has(document_id)) this.vectors.add(document_id, id, vector);
        await nextTurn();
      }
    } catch (error) {
      this.options.logger.error({ err: error }, 'documents: the stored vectors could not be loaded; search answers from words alone until the next start');
    }
  }

  /** Originals whose document is gone (its person left the household, or a crash between the two deletes). */
  private async removeStrayFiles(): Promise<void> {
    try {
      const names = await readdir(this.options.documentsDir).catch(() => [] as string[]);
      const stray = names.filter((name) => documentFileName.test(name) && !this.rows.has(name) && !this.adding.has(name));
      for (const name of stray) await rm(path.join(this.options.documentsDir, name), { force: true });
    } catch (error) {
      this.options.logger.warn(`documents: stray originals not removed: ${messageOf(error)}`);
    }
  }
}

function shelvedOf(row: DocumentRow): { library: LibraryName; owner_person_id: string | null; added_by: string | null } {
  return { library: row.library as LibraryName, owner_person_id: row.owner_person_id, added_by: row.added_by };
}

export function summaryOf(row: DocumentRow): DocumentSummary {
  return {
    id: row.id,
    name: row.name,
    library: row.library as LibraryName,
    owner_person_id: row.owner_person_id,
    added_by: row.added_by,
    media_type: row.media_type,
    size: row.size,
    pages: row.pages,
    passages: row.passages,
    status: row.status as DocumentStatus,
    progress: row.progress,
    error: row.error,
    added_at: row.added_at,
    source: row.source as DocumentSource,
  };
}
