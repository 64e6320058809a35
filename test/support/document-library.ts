import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseConfig } from '../../src/config.ts';
import { Documents, type DocumentLibraryOptions } from '../../src/documents/document-library.ts';
import type { DocumentStatus, DocumentSummary, LibraryName } from '../../src/documents/document-types.ts';
import { createDocumentExtractor } from '../../src/documents/extract/extract-document.ts';
import { Household } from '../../src/household/household.ts';
import type { Caller, Person, Role } from '../../src/people/person.ts';
import { openDatabase, type Db } from '../../src/store/database.ts';
import { insertPerson } from '../../src/store/people-repository.ts';
import { jailFor } from './jail.ts';
import { recordingLogger } from './recording-logger.ts';
import { StandInEmbedder } from './stand-in-embedder.ts';

export type Household4 = Record<Role | 'otherAdult', Person>;

/**
 * A documents library on a real SQLite file in a temp folder, with a household of every role,
 * the real extractor (pdftotext in its jail) and the stand-in embedder. `reopen` ends the library
 * and the database and opens both again over the same file, as a restart does.
 */
export class LibraryBench {
  db!: Db;
  library!: Documents;
  people!: Household4;
  embedder = new StandInEmbedder();
  readonly log = recordingLogger();
  private constructor(readonly folder: string) {}

  static async open(embedder?: StandInEmbedder): Promise<LibraryBench> {
    const bench = new LibraryBench(await mkdtemp(path.join(tmpdir(), 'hearth-documents-')));
    if (embedder) bench.embedder = embedder;
    bench.db = await openDatabase(bench.databaseFile);
    const household = new Household(bench.db);
    const owner = await household.firstOwner();
    const added = {} as Record<string, Person>;
    for (const role of ['adult', 'child', 'guest'] as const) added[role] = await insertPerson(bench.db, { name: `The ${role}`, role, passphraseHash: null });
    added.otherAdult = await insertPerson(bench.db, { name: 'Another adult', role: 'adult', passphraseHash: null });
    bench.people = { owner, ...added } as Household4;
    bench.library = await bench.openLibrary();
    return bench;
  }

  get databaseFile(): string {
    return path.join(this.folder, 'hearth.db');
  }

  get documentsDir(): string {
    return path.join(this.folder, 'documents');
  }

  async openLibrary(options: Partial<DocumentLibraryOptions> = {}): Promise<Documents> {
    const config = parseConfig({ DATA_DIR: this.folder });
    const library = await Documents.open({
      db: this.db,
      documentsDir: this.documentsDir,
      maxBytes: 2 * 1024 * 1024,
      extractor: createDocumentExtractor({ jail: jailFor(config) }),
      embedder: this.embedder,
      logger: this.log.logger,
      indexing: { batchSize: 4, retry: { firstMs: 20, maxMs: 200 } },
      ...options,
    });
    library.start();
    return library;
  }

  /** Ends this library and database, and opens them again over the same file (with another embedder when given). */
  async reopen(embedder?: StandInEmbedder): Promise<Documents> {
    await this.library.stop();
    await this.db.destroy();
    if (embedder) this.embedder = embedder;
    this.db = await openDatabase(this.databaseFile);
    this.library = await this.openLibrary();
    return this.library;
  }

  async close(): Promise<void> {
    await this.library.stop();
    await this.db.destroy();
    await rm(this.folder, { recursive: true, force: true });
  }

  caller(who: keyof Household4): Caller {
    return { person: this.people[who], via: 'sign_in' };
  }

  /** Adds a document as `who` and answers its summary; throws when refused. */
  async add(who: keyof Household4, name: string, content: string | Buffer, library: LibraryName = 'mine'): Promise<DocumentSummary> {
    const added = await this.library.add({ caller: this.caller(who), library, name, content: typeof content === 'string' ? Buffer.from(content) : content, source: 'rest' });
    if (!added.ok) throw new Error(`add ${name}: ${added.code} ${added.message}`);
    return added.document;
  }

  /** Resolves with the document's summary once it reaches `status` (as the owner, who may not see others' own: use `who`). */
  reaches(id: string, status: DocumentStatus, who: keyof Household4 = 'owner', library = this.library): Promise<DocumentSummary> {
    return new Promise((resolve) => {
      const now = library.get(this.caller(who), id);
      if (now?.status === status) return resolve(now);
      const stop = library.on((event) => {
        if (event.type === 'document_status' && event.document.id === id && event.document.status === status) {
          stop();
          resolve(event.document);
        }
      });
    });
  }
}
