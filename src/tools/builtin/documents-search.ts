import { Type, type Static } from '@sinclair/typebox';
import type { DocumentSearchResult } from '../../documents/document-types.ts';
import { toolFailure } from '../../failure.ts';
import type { Person } from '../../people/person.ts';
import type { Tool, ToolContext } from '../tool.ts';
import type { ToolSessions } from '../tool-sessions.ts';

const defaultLimit = 5;
const maximumLimit = 10;

const parameters = Type.Object(
  {
    query: Type.String({ description: 'What to look for, in words the documents would use' }),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: maximumLimit, description: `How many passages (${defaultLimit} when absent)` })),
  },
  { additionalProperties: false },
);

/** What the tool needs of the library: a search as a person, or as the household only (a shared session). */
export interface DocumentSearch {
  search(searcher: { person: Person }, query: string, options: { limit?: number; signal?: AbortSignal; householdOnly?: boolean }): Promise<DocumentSearchResult[]>;
}

export interface DocumentsSearchDependencies {
  documents: () => DocumentSearch | undefined;
  sessions: () => ToolSessions | undefined;
  person: (personId: string) => Promise<Person | undefined>;
}

/** The link the page opens the passage at: the model copies it into its answer as the citation. */
export function passageLink(result: Pick<DocumentSearchResult, 'document_id' | 'passage'>): string {
  return `/documents/${encodeURIComponent(result.document_id)}?passage=${result.passage}`;
}

function citation(result: DocumentSearchResult): string {
  const label = `${result.name.replace(/[[\]\r\n]/g, ' ')}${result.page === null ? '' : `, p. ${result.page}`}`;
  return `[${label}](${passageLink(result)})`;
}

function describe(results: readonly DocumentSearchResult[]): string {
  const lines = [`${results.length} passage${results.length === 1 ? '' : 's'}, best first. Cite each one you use with its link as written:`];
  results.forEach((result, index) => {
    lines.push('', `${index + 1}. ${citation(result)}${result.heading === null ? '' : ` — ${result.heading}`}`, result.text);
  });
  return lines.join('\n');
}

/** Whose libraries a call reads: the session's person's and the household's; the household's alone in a shared session. */
async function readerOf(deps: DocumentsSearchDependencies, context: ToolContext): Promise<{ ok: true; person: Person; householdOnly: boolean } | { ok: false; message: string }> {
  const sessionId = context.parentSessionId ?? context.sessionId;
  const session = await deps.sessions()?.find(sessionId);
  if (!session) return { ok: false, message: `The session ${sessionId} is gone, and with it whose documents these were.` };
  const person = await deps.person(session.personId);
  if (!person) return { ok: false, message: 'The person this session belonged to has left the household.' };
  if (person.role === 'guest') return { ok: false, message: 'Guests have no document library: nothing can be searched in a guest session.' };
  return { ok: true, person, householdOnly: session.shared };
}

/** Searches the documents libraries by words and meaning; the passages it answers are outside content (the taint rule). */
export function createDocumentsSearchTool(deps: DocumentsSearchDependencies): Tool<Static<typeof parameters>> {
  return {
    name: 'documents_search',
    description: "Search the person's and the household's documents (manuals, contracts, letters, recipes); answers passages with links to cite.",
    parameters,
    untrustedSource: () => 'documents of the library',
    async execute({ query, limit }, context) {
      if (query.trim() === '') return toolFailure('Send query: what to look for, e.g. "which filter does the cooker hood take".');
      const documents = deps.documents();
      if (!documents) return toolFailure('The document library is not available in this Hearth.');
      const reader = await readerOf(deps, context);
      if (!reader.ok) return toolFailure(reader.message);
      const results = await documents.search({ person: reader.person }, query, { limit: limit ?? defaultLimit, signal: context.signal, householdOnly: reader.householdOnly });
      if (results.length === 0) {
        const where = reader.householdOnly ? "the household's library (this session is shared, so only that one)" : 'the libraries';
        return `No passage of ${where} matches "${query.trim()}". Try other words, or ask the person to add the document to the Library.`;
      }
      return describe(results);
    },
  };
}
