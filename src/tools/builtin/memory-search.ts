import { Type, type Static } from '@sinclair/typebox';
import { toolFailure } from '../../failure.ts';
import type { Db } from '../../store/database.ts';
import { searchFacts, type MemoryFact } from '../../store/memory-repository.ts';
import type { Tool } from '../tool.ts';
import type { MemoryOwnerOf } from './memory-owner.ts';

const parameters = Type.Object({ query: Type.String({ description: 'Words to look for' }) }, { additionalProperties: false });

const maximumResults = 10;
const valueLimit = 300;

/** One fact as the memory tools show it: `#id [category] key: value`. */
export function describeFact(fact: MemoryFact): string {
  const value = fact.value.length > valueLimit ? `${fact.value.slice(0, valueLimit)}…` : fact.value;
  return `#${fact.id} [${fact.category}] ${fact.key}: ${value}`;
}

/** Searches the facts of the person whose session the call runs in (`ownerOf`). */
export function createMemorySearchTool(db: Db, ownerOf: MemoryOwnerOf): Tool<Static<typeof parameters>> {
  return {
    name: 'memory_search',
    description: 'Search long-term memory about the user; answers matching facts with their ids.',
    parameters,
    async execute({ query }, context) {
      if (query.trim() === '') return { output: 'Send query: the words to look for, e.g. "home server".', success: false };
      const owner = await ownerOf(context);
      if (!owner.ok) return toolFailure(owner.message);
      const { facts } = await searchFacts(db, owner.personId, query, maximumResults);
      if (facts.length === 0) return `No remembered fact matches "${query.trim()}". Try other or fewer words.`;
      return [`${facts.length} fact${facts.length === 1 ? '' : 's'}, best match first:`, ...facts.map(describeFact)].join('\n');
    },
  };
}
