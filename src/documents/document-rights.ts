import type { Person } from '../people/person.ts';
import type { LibraryName } from './document-types.ts';

/** Where a document sits: the household's library, or one person's own. */
export interface Shelved {
  library: LibraryName;
  owner_person_id: string | null;
  added_by: string | null;
}

/** A person sees their own library and the household's; guests have no library. */
export function maySeeDocument(person: Person, document: Shelved): boolean {
  if (person.role === 'guest') return false;
  return document.library === 'household' || document.owner_person_id === person.id;
}

/** Why the person may not add to that library, or undefined when they may: children only read the household's. */
export function whyNotAdd(person: Person, library: LibraryName): string | undefined {
  if (person.role === 'guest') return 'Guests have no library: sign in as a person of the household to add documents.';
  if (library === 'household' && person.role === 'child') return "Children read the household's library but do not add to it; add it to your own library instead.";
  return undefined;
}

/** Their own; a household one they added; any the owner sees. */
export function mayDeleteDocument(person: Person, document: Shelved): boolean {
  if (!maySeeDocument(person, document)) return false;
  if (document.library === 'mine') return true;
  return person.role === 'owner' || document.added_by === person.id;
}
