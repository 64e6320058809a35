import type { Caller } from '../people/person.ts';
import type { Refusal } from '../failure.ts';

export type LibraryName = 'mine' | 'household';
export type DocumentStatus = 'queued' | 'indexing' | 'ready' | 'failed';
export type DocumentSource = 'page' | 'rest' | 'telegram' | 'folder';

/** What GET /documents lists (snake_case: it is the wire shape too). */
export interface DocumentSummary {
  id: string;                 // uuid
  name: string;               // the file name as given (shown, never used as a path)
  library: LibraryName;       // 'mine' = owner_person_id's; 'household' = everyone's in the household
  owner_person_id: string | null;   // null for the household library
  added_by: string | null;    // person id
  media_type: string;         // as detected: application/pdf, text/markdown, text/plain, text/html,
                              // application/vnd.openxmlformats-officedocument.wordprocessingml.document, message/rfc822
  size: number;               // bytes
  pages: number | null;       // PDFs (and DOCX if known); null otherwise
  passages: number | null;    // once split
  status: DocumentStatus;
  progress: number | null;    // 0..1 while indexing (passages embedded / passages)
  error: string | null;       // why it failed, in words a person can act on
  added_at: string;           // ISO
  source: DocumentSource;
}

export interface DocumentPassage {
  document_id: string;
  ordinal: number;            // 0-based position in the document
  page: number | null;        // 1-based page (PDF), null when the format has none
  heading: string | null;     // the heading path above it, "Warranty › Exclusions"
  text: string;
}

export interface DocumentSearchResult {
  document_id: string;
  name: string;
  page: number | null;
  passage: number;            // ordinal, for the link that opens it
  heading: string | null;
  text: string;
  score: number;              // the fused score, higher is better
}

export type DocumentEvent =
  | { type: 'document_status'; document: DocumentSummary }
  | { type: 'document_deleted'; id: string; library: LibraryName; owner_person_id: string | null };

export type AddDocumentResult = { ok: true; document: DocumentSummary } | ({ ok: false } & Refusal<'too_large' | 'unsupported_type' | 'forbidden' | 'invalid_request'>);

/** Who may see or change what: a person sees their own library and the household's; guests have none. */
export interface DocumentLibrary {
  add(input: { caller: Caller; library: LibraryName; name: string; mediaType?: string; content: Buffer; source: DocumentSource }): Promise<AddDocumentResult>;
  list(caller: Caller): DocumentSummary[];
  get(caller: Caller, id: string): DocumentSummary | undefined;
  /** Passages from `from` (default 0), `count` of them (default 20, max 100): opens a document at a passage. */
  passages(caller: Caller, id: string, range?: { from?: number; count?: number }): Promise<DocumentPassage[] | undefined>;
  /** The stored original, for download. */
  original(caller: Caller, id: string): { path: string; name: string; mediaType: string } | undefined;
  /** Whether the caller may delete it: their own, or a household one they added (the owner: any); false when they cannot see it. */
  mayDelete(caller: Caller, id: string): boolean;
  /** Removes the document, its passages, vectors and file; false when the caller cannot see it or may not delete it. */
  delete(caller: Caller, id: string): Promise<boolean>;
  search(caller: Caller, query: string, options?: { limit?: number; signal?: AbortSignal }): Promise<DocumentSearchResult[]>;
  on(listener: (event: DocumentEvent) => void): () => void;
}
