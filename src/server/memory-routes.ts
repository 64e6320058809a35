import { Type, type Static } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { ApiError } from '../errors.ts';
import type { MemoryService } from '../memory/memory-service.ts';
import type { Person } from '../people/person.ts';
import { keepsMemory } from '../people/rights.ts';
import type { Db } from '../store/database.ts';
import { deleteFact, factLimits, listFacts, upsertFact, type MemoryFact } from '../store/memory-repository.ts';

const FactParams = Type.Object({ id: Type.String({ pattern: '^[0-9]{1,15}$' }) });
type FactParams = Static<typeof FactParams>;
// A pattern rather than minLength, so a name or value of only spaces is refused too.
const nonBlank = '\\S';
const FactBody = Type.Object(
  {
    category: Type.String({ maxLength: factLimits.category, pattern: nonBlank }),
    key: Type.String({ maxLength: factLimits.key, pattern: nonBlank }),
    value: Type.String({ maxLength: factLimits.value, pattern: nonBlank }),
  },
  { additionalProperties: false },
);
type FactBody = Static<typeof FactBody>;

function factJson(fact: MemoryFact) {
  return { id: fact.id, category: fact.category, key: fact.key, value: fact.value, created_at: fact.createdAt, updated_at: fact.updatedAt };
}

/** Refuses a guest what would make Hearth remember something about them. */
function mustKeepMemory(person: Person): void {
  if (!keepsMemory(person)) throw new ApiError('forbidden', 'Guests keep no long-term memory; the owner, adults and children do.');
}

/**
 * Long-term memory for the web client: read it, edit facts, and run extraction now. Each caller
 * sees and changes only their own memory; another person's fact answers like a missing one.
 */
export async function memoryRoutes(app: FastifyInstance, options: { db: Db; memory: MemoryService }) {
  const { db, memory } = options;

  app.get('/memory', async (request) => {
    const { person } = request.caller;
    return { summary: (await memory.summary(person.id)) ?? null, facts: (await listFacts(db, person.id)).map(factJson) };
  });

  app.put<{ Body: FactBody }>('/memory/facts', { schema: { body: FactBody } }, async (request) => {
    const { person } = request.caller;
    mustKeepMemory(person);
    const saved = await upsertFact(db, person.id, request.body);
    if (saved.change !== 'unchanged') memory.runInBackground();
    return factJson(saved.fact);
  });

  app.delete<{ Params: FactParams }>('/memory/facts/:id', { schema: { params: FactParams } }, async (request, reply) => {
    const deleted = await deleteFact(db, request.caller.person.id, Number(request.params.id));
    if (!deleted) throw new ApiError('not_found', `No remembered fact with id ${request.params.id}.`);
    memory.runInBackground();
    return reply.code(204).send();
  });

  // Reads the caller's sessions with messages not yet extracted, idle or not, and waits for the run;
  // the answer tells of their sessions and their summary only (the run also reads others' idle ones).
  app.post('/memory/extract', async (request) => {
    const { person } = request.caller;
    mustKeepMemory(person);
    const report = await memory.runExtraction({ ignoreIdleOf: person.id });
    const theirs = <T extends { personId: string }>(entries: T[]) => entries.filter((entry) => entry.personId === person.id);
    return {
      processed: theirs(report.processed).map((entry) => ({ session_id: entry.sessionId, facts_changed: entry.factsChanged })),
      failed: theirs(report.failed).map((entry) => ({ session_id: entry.sessionId, message: entry.message })),
      summary_updated: report.summariesUpdated.includes(person.id),
    };
  });
}
