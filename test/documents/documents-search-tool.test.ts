// The documents_search built-in in memory: over a real library, in sessions of different people
// (own, shared with the household, a guest's), with citations the page opens, and its passages
// taken as outside content.
import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Person } from '../../src/people/person.ts';
import { createDocumentsSearchTool } from '../../src/tools/builtin/documents-search.ts';
import { executeToolCall } from '../../src/tools/execute-tool-call.ts';
import { ToolRegistry } from '../../src/tools/tool-registry.ts';
import { documentFolder } from '../support/document-files.ts';
import { LibraryBench } from '../support/document-library.ts';
import { runTool, toolContext } from '../support/tool-context.ts';

let bench: LibraryBench;
const ids: Record<string, string> = {};
const sessions: Record<string, { profileId: string; personId: string; shared: boolean }> = {};

function toolOf(library = bench.library) {
  return createDocumentsSearchTool({
    documents: () => library,
    sessions: () => ({ find: async (id) => sessions[id], switchProfile: async () => ({ ok: true, switched: false }) }),
    person: async (id) => Object.values(bench.people).find((person: Person) => person.id === id),
  });
}

beforeAll(async () => {
  bench = await LibraryBench.open();
  const files = await documentFolder();
  try {
    const pdf = await files.pdf('hood-manual.pdf', [
      [{ heading: 'Cooker hood', level: 1, paragraphs: ['Read this manual before use.'] }],
      [{ heading: 'Installation', level: 1, paragraphs: ['Mount the hood 65 cm above the hob.'] }],
      [{ heading: 'Filters', level: 1, paragraphs: ['Wash the grease filters every four weeks in hot water.'] }],
    ]);
    ids.manual = (await bench.add('adult', pdf.name, await readFile(pdf.path), 'household')).id;
  } finally {
    await files.remove();
  }
  ids.diary = (await bench.add('adult', 'diary [private].md', '# Diary\n\nThe grease filters of my life: a secret about filters.')).id;
  for (const id of Object.values(ids)) await bench.reaches(id, 'ready', 'adult');
  sessions.own = { profileId: 'secretary', personId: bench.people.adult.id, shared: false };
  sessions.shared = { profileId: 'secretary', personId: bench.people.adult.id, shared: true };
  sessions.other = { profileId: 'secretary', personId: bench.people.otherAdult.id, shared: false };
  sessions.guest = { profileId: 'secretary', personId: bench.people.guest.id, shared: false };
});
afterAll(async () => {
  await bench.close();
});

describe('documents_search', () => {
  it("answers passages of the person's and the household's libraries, each with a link to cite", async () => {
    const result = await runTool(toolOf(), { query: 'how often to wash the grease filters' }, { sessionId: 'own' });
    expect(result.success).toBe(true);
    expect(result.output).toMatch(/^\d passages, best first\. Cite each one you use with its link as written:\n/);
    expect(result.output).toContain(`1. [hood-manual.pdf, p. 3](/documents/${ids.manual}?passage=2) — Filters\nWash the grease filters every four weeks in hot water.`);
    // A name cannot break the link it is the label of.
    expect(result.output).toContain(`[diary  private .md](/documents/${ids.diary}?passage=0) — Diary`);
  });

  it("in a session shared with the household, and in another person's, reads the household's library only", async () => {
    for (const sessionId of ['shared', 'other']) {
      const result = await runTool(toolOf(), { query: 'grease filters secret', limit: 10 }, { sessionId });
      expect(result.output, sessionId).toContain(`/documents/${ids.manual}?passage=`);
      expect(result.output, sessionId).not.toContain(ids.diary);
      expect(result.output, sessionId).not.toContain('secret');
    }
    const sub = await runTool(toolOf(), { query: 'secret' }, { sessionId: 'sub-1', parentSessionId: 'shared', isSubagent: true });
    expect(sub.output).not.toContain(ids.diary);
  });

  it('says so when nothing matches, when the query is blank, and in a guest session', async () => {
    expect(await runTool(toolOf(), { query: 'zebra xylophone' }, { sessionId: 'shared' })).toEqual({
      success: true,
      output: `No passage of the household's library (this session is shared, so only that one) matches "zebra xylophone". Try other words, or ask the person to add the document to the Library.`,
    });
    expect(await runTool(toolOf(), { query: '  ' }, { sessionId: 'own' })).toMatchObject({ success: false, output: expect.stringMatching(/^Send query/) });
    expect(await runTool(toolOf(), { query: 'filters' }, { sessionId: 'guest' })).toMatchObject({ success: false, output: expect.stringMatching(/^Guests have no document library/) });
    expect(await runTool(toolOf(), { query: 'filters' }, { sessionId: 'gone' })).toMatchObject({ success: false, output: expect.stringContaining('gone') });
  });

  it('its passages are outside content: the run that reads them is tainted', async () => {
    const registry = new ToolRegistry([toolOf()]);
    const result = await executeToolCall(
      { name: 'documents_search', arguments: { query: 'grease filters' } },
      { registry, allowedNames: ['documents_search'], context: toolContext({ sessionId: 'own' }), defaultTimeoutMs: 10_000, authorize: async () => ({ allowed: true }) },
    );
    expect(result).toMatchObject({ success: true, outside: { source: 'documents of the library', quotable: true } });
  });
});
