import { maySeeDocument } from '../documents/document-rights.ts';
import type { DocumentLibrary, LibraryName } from '../documents/document-types.ts';
import type { Audience, HearthEventHub } from './hearth-events.ts';

/** Who hears of a document: those who may see it (its person for their own library; everyone but guests for the household's). */
export function documentAudience(document: { library: LibraryName; owner_person_id: string | null }): Audience {
  return (person) => maySeeDocument(person, { ...document, added_by: null });
}

/** Says on the events socket how each document's indexing goes, and that one was deleted, only to those who may see it. */
export function announceDocuments(documents: Pick<DocumentLibrary, 'on'>, events: HearthEventHub): () => void {
  return documents.on((event) => {
    if (event.type === 'document_status') events.publish({ type: 'document_status', document: event.document }, documentAudience(event.document));
    else events.publish({ type: 'document_deleted', id: event.id }, documentAudience(event));
  });
}
