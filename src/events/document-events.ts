import type { DocumentLibrary, LibraryName } from '../documents/document-types.ts';
import type { Person } from '../people/person.ts';
import type { Audience, HearthEventHub } from './hearth-events.ts';

/** Who hears of a document: its person for their own library; everyone but guests for the household's. */
export function documentAudience(document: { library: LibraryName; owner_person_id: string | null }): Audience {
  return (person: Person) => (document.library === 'household' ? person.role !== 'guest' : person.id === document.owner_person_id);
}

/** Says on the events socket how each document's indexing goes, and that one was deleted, only to those who may see it. */
export function announceDocuments(documents: Pick<DocumentLibrary, 'on'>, events: HearthEventHub): () => void {
  return documents.on((event) => {
    if (event.type === 'document_status') events.publish({ type: 'document_status', document: event.document }, documentAudience(event.document));
    else events.publish({ type: 'document_deleted', id: event.id }, documentAudience(event));
  });
}

