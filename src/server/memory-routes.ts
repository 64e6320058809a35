import { Type, type Static } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { ApiError } from '../errors.ts';
import type { MemoryService } from '../memory/memory-service.ts';
import type { Db } from '../store/database.ts';
import { deleteFact, factLimits, listFacts, readSummary, upsertFact, type MemoryFact } from '../store/memory-repository.ts';

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

/** Long-term memory for the web client: read it, edit facts, and run extraction now. */
export async function memoryRoutes(app: FastifyInstance, options: { db: Db; memory: MemoryService }) {
  const { db, memory } = options;

  app.get('/memory', async () => {
    const summary = await readSummary(db);
    return { summary: summary.content === '' ? null : summary.content, facts: (await listFacts(db)).map(factJson) };
  });

  app.put<{ Body: FactBody }>('/memory/facts', { schema: { body: FactBody } }, async (request) => {
    const saved = await upsertFact(db, request.body);
    if (saved.change !== 'unchanged') memory.runInBackground();
    return factJson(saved.fact);
  });

  app.delete<{ Params: FactParams }>('/memory/facts/:id', { schema: { params: FactParams } }, async (request, reply) => {
    const deleted = await deleteFact(db, Number(request.params.id));
    if (!deleted) throw new ApiError('not_found', `No remembered fact with id ${request.params.id}.`);
    memory.runInBackground();
    return reply.code(204).send();
  });

  // Reads every session with messages not yet extracted, idle or not, and waits for the run.
  app.post('/memory/extract', async () => {
    const report = await memory.runExtraction({ ignoreIdle: true });
    return {
      processed: report.processed.map((entry) => ({ session_id: entry.sessionId, facts_changed: entry.factsChanged })),
      failed: report.failed.map((entry) => ({ session_id: entry.sessionId, message: entry.message })),
      summary_updated: report.summaryUpdated,
    };
  });
}
