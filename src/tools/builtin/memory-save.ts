import { Type, type Static } from '@sinclair/typebox';
import type { Db } from '../../store/database.ts';
import { factLimits, factName, upsertFact } from '../../store/memory-repository.ts';
import type { Tool } from '../tool.ts';
import { describeFact } from './memory-search.ts';
import type { MemoryOwnerOf } from './memory-owner.ts';
import { toolFailure } from '../../failure.ts';

const parameters = Type.Object(
  {
    category: Type.String({ description: 'e.g. preferences, environment' }),
    key: Type.String({ description: 'snake_case' }),
    value: Type.String(),
  },
  { additionalProperties: false },
);

/** Saves a fact of the person whose session the call runs in (`ownerOf`); `onChange` runs after a fact changed, so their summary can be rewritten. */
export function createMemorySaveTool(db: Db, ownerOf: MemoryOwnerOf, onChange: () => void = () => {}): Tool<Static<typeof parameters>> {
  return {
    name: 'memory_save',
    description: 'Remember a durable fact about the user; the same category+key is replaced.',
    parameters,
    // Every later run reads what is remembered.
    outflow: () => ({ effect: 'a fact remembered now' }),
    async execute(args, context) {
      for (const field of ['category', 'key', 'value'] as const) {
        const text = field === 'value' ? args[field].trim() : factName(args[field]);
        if (text === '') return toolFailure(`Send ${field}: it must not be empty.`);
        if (text.length > factLimits[field]) return toolFailure(`${field} is at most ${factLimits[field]} characters; this one has ${text.length}. Shorten it.`);
      }
      const owner = await ownerOf(context);
      if (!owner.ok) return toolFailure(owner.message);
      const saved = await upsertFact(db, owner.personId, args);
      if (saved.change === 'unchanged') return `Already remembered: ${describeFact(saved.fact)}`;
      onChange();
      if (saved.change === 'updated') return `Updated ${describeFact(saved.fact)} (was: ${saved.previousValue})`;
      return `Saved ${describeFact(saved.fact)}`;
    },
  };
}
