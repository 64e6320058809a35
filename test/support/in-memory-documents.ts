import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type {
  AddDocumentResult,
  DocumentEvent,
  DocumentLibrary,
  DocumentPassage,
  DocumentSearchResult,
  DocumentSummary,
} from '../../src/documents/document-types.ts';
import type { Caller } from '../../src/people/person.ts';

/**
 * A test double of DocumentLibrary for the routes' shapes only: it keeps the library's rules of who sees and changes
 * what, splits text into paragraphs as passages and finds them by the words they share with the query. The real
 * library (src/documents/document-library.ts) is what the whole-server and browser tests use.
 */
export class InMemoryDocuments implements DocumentLibrary {
  readonly documents = new Map<string, DocumentSummary>();
  private readonly texts = new Map<string, DocumentPassage[]>();
  private readonly listeners = new Set<(event: DocumentEvent) => void>();
  private readonly folder = mkdtempSync(path.join(tmpdir(), 'hearth-documents-double-'));

  /** With `holdIndexing`, a document added stays `indexing` until `finishIndexing` (or `failIndexing`) says otherwise. */
  constructor(
    private readonly maxBytes = 1024 * 1024,
    private readonly holdIndexing = false,
  ) {}

  finishIndexing(id: string): void {
    this.settle(id, { status: 'ready', progress: null });
  }

  failIndexing(id: string, error: string): void {
    this.settle(id, { status: 'failed', progress: null, error });
  }

  private settle(id: string, change: Partial<DocumentSummary>): void {
    const document = { ...this.documents.get(id)!, ...change };
    this.documents.set(id, document);
    this.emit({ type: 'document_status', document });
  }

  close(): void {
    rmSync(this.folder, { recursive: true, force: true });
  }

  async add({ caller, library, name, mediaType, content, source }: Parameters<DocumentLibrary['add']>[0]): Promise<AddDocumentResult> {
    const role = caller.person.role;
    if (role === 'guest' || (library === 'household' && role === 'child')) return { ok: false, code: 'forbidden', message: 'You may not add to this library.' };
    if (content.length > this.maxBytes) return { ok: false, code: 'too_large', message: 'The file is too large.' };
    if (!/\.(txt|md)$/i.test(name)) return { ok: false, code: 'unsupported_type', message: `Hearth does not read ${name}'s kind of file.` };
    const id = randomUUID();
    const paragraphs = content.toString('utf8').split(/\n\s*\n/).map((text) => text.trim()).filter((text) => text !== '');
    const document: DocumentSummary = {
      id,
      name,
      library,
      owner_person_id: library === 'mine' ? caller.person.id : null,
      added_by: caller.person.id,
      media_type: mediaType ?? (name.endsWith('.md') ? 'text/markdown' : 'text/plain'),
      size: content.length,
      pages: null,
      passages: paragraphs.length,
      status: this.holdIndexing ? 'indexing' : 'ready',
      progress: this.holdIndexing ? 0 : null,
      error: null,
      added_at: new Date().toISOString(),
      source,
    };
    this.documents.set(id, document);
    this.texts.set(id, paragraphs.map((text, ordinal) => ({ document_id: id, ordinal, page: null, heading: null, text })));
    writeFileSync(path.join(this.folder, id), content);
    this.emit({ type: 'document_status', document });
    return { ok: true, document };
  }

  list(caller: Caller): DocumentSummary[] {
    return [...this.documents.values()].filter((document) => this.sees(caller, document));
  }

  get(caller: Caller, id: string): DocumentSummary | undefined {
    const document = this.documents.get(id);
    return document && this.sees(caller, document) ? document : undefined;
  }

  async passages(caller: Caller, id: string, range: { from?: number; count?: number } = {}): Promise<DocumentPassage[] | undefined> {
    if (!this.get(caller, id)) return undefined;
    const from = range.from ?? 0;
    return this.texts.get(id)!.slice(from, from + Math.min(range.count ?? 20, 100));
  }

  original(caller: Caller, id: string): { path: string; name: string; mediaType: string } | undefined {
    const document = this.get(caller, id);
    return document && { path: path.join(this.folder, id), name: document.name, mediaType: document.media_type };
  }

  mayDelete(caller: Caller, id: string): boolean {
    const document = this.get(caller, id);
    return document !== undefined && (document.library === 'mine' || caller.person.role === 'owner' || document.added_by === caller.person.id);
  }

  async delete(caller: Caller, id: string): Promise<boolean> {
    const document = this.get(caller, id);
    if (!document || !this.mayDelete(caller, id)) return false;
    this.documents.delete(id);
    this.texts.delete(id);
    this.emit({ type: 'document_deleted', id, library: document.library, owner_person_id: document.owner_person_id });
    return true;
  }

  async search(caller: Caller, query: string, options: { limit?: number } = {}): Promise<DocumentSearchResult[]> {
    const words = new Set(query.toLowerCase().match(/\p{L}+/gu) ?? []);
    const results: DocumentSearchResult[] = [];
    for (const document of this.list(caller)) {
      for (const passage of this.texts.get(document.id)!) {
        const shared = (passage.text.toLowerCase().match(/\p{L}+/gu) ?? []).filter((word) => words.has(word)).length;
        if (shared > 0) results.push({ document_id: document.id, name: document.name, page: passage.page, passage: passage.ordinal, heading: passage.heading, text: passage.text, score: shared });
      }
    }
    return results.sort((first, second) => second.score - first.score).slice(0, options.limit ?? 8);
  }

  on(listener: (event: DocumentEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private emit(event: DocumentEvent): void {
    for (const listener of this.listeners) listener(event);
  }

  private sees(caller: Caller, document: DocumentSummary): boolean {
    if (caller.person.role === 'guest') return false;
    return document.library === 'household' || document.owner_person_id === caller.person.id;
  }
}
