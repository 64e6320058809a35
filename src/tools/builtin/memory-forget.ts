import { Type, type Static } from '@sinclair/typebox';
import type { Db } from '../../store/database.ts';
import { deleteFact, deleteFactByKey } from '../../store/memory-repository.ts';
import type { Tool } from '../tool.ts';
import { describeFact } from './memory-search.ts';
import type { MemoryOwnerOf } from './memory-owner.ts';
import { toolFailure } from '../../failure.ts';

const parameters = Type.Object(
  {
    id: Type.Optional(Type.Integer({ description: 'Fact id from memory_search' })),
    category: Type.Optional(Type.String()),
    key: Type.Optional(Type.String()),
  },
  { additionalProperties: false },
);

/** Forgets a fact of the person whose session the call runs in (`ownerOf`); `onChange` runs after a fact was deleted, so their summary can be rewritten. */
export function createMemoryForgetTool(db: Db, ownerOf: MemoryOwnerOf, onChange: () => void = () => {}): Tool<Static<typeof parameters>> {
  return {
    name: 'memory_forget',
    description: 'Forget a fact by id, or by category and key; only when the user asks.',
    parameters,
    async execute({ id, category, key }, context) {
      if (id === undefined && (category === undefined || key === undefined)) {
        return { output: 'Send id (from memory_search), or both category and key.', success: false };
      }
      const owner = await ownerOf(context);
      if (!owner.ok) return toolFailure(owner.message);
      const forgotten = id !== undefined ? await deleteFact(db, owner.personId, id) : await deleteFactByKey(db, owner.personId, category!, key!);
      if (!forgotten) {
        const which = id !== undefined ? `#${id}` : `with category "${category}" and key "${key}"`;
        return { output: `There is no remembered fact ${which}. Use memory_search to find it and its id.`, success: false };
      }
      onChange();
      return `Forgot ${describeFact(forgotten)}`;
    },
  };
}
