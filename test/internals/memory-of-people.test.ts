import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import { Kysely, SqliteDialect } from 'kysely';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { setupForSession } from '../../src/agent/round-setup.ts';
import { parseConfig } from '../../src/config.ts';
import { Household } from '../../src/household/household.ts';
import { BackendRegistry, modelLimitsFrom } from '../../src/llm/backend-registry.ts';
import type { ChatRequest, CompletionResult, EmbedResult, LlmBackend, LlmStreamEvent } from '../../src/llm/types.ts';
import { MemoryService } from '../../src/memory/memory-service.ts';
import type { Person } from '../../src/people/person.ts';
import { ProfileRegistry } from '../../src/profiles/profile-registry.ts';
import { openDatabase, type Db } from '../../src/store/database.ts';
import {
  applyExtraction,
  deleteFact,
  deleteFactByKey,
  extractionState,
  findFactByKey,
  listFacts,
  readSummary,
  recentFacts,
  searchFacts,
  sessionsDueForExtraction,
  upsertFact,
  writeSummary,
} from '../../src/store/memory-repository.ts';
import { appendMessage } from '../../src/store/messages-repository.ts';
import { migratorFor } from '../../src/store/migrations/index.ts';
import { deletePerson, insertPerson } from '../../src/store/people-repository.ts';
import { createSession, findSession, updateSession } from '../../src/store/sessions-repository.ts';
import { createMemoryForgetTool } from '../../src/tools/builtin/memory-forget.ts';
import { memoryOwnerOf, sharedSessionsKeepNoMemory } from '../../src/tools/builtin/memory-owner.ts';
import { createMemorySaveTool } from '../../src/tools/builtin/memory-save.ts';
import { createMemorySearchTool } from '../../src/tools/builtin/memory-search.ts';
import { ToolRegistry } from '../../src/tools/tool-registry.ts';
import { recordingLogger } from '../support/recording-logger.ts';
import { runTool } from '../support/tool-context.ts';

let folder: string;
let db: Db;
let household: Household;
let ada: Person;
let bea: Person;
let gus: Person;

beforeEach(async () => {
  folder = await mkdtemp(path.join(tmpdir(), 'hearth-memory-people-'));
  db = await openDatabase(path.join(folder, 'hearth.db'));
  household = new Household(db);
  ada = await household.firstOwner();
  bea = await insertPerson(db, { name: 'Bea', role: 'adult', passphraseHash: null });
  gus = await insertPerson(db, { name: 'Gus', role: 'guest', passphraseHash: null });
  household.changed();
});

afterEach(async () => {
  await db.destroy();
  await rm(folder, { recursive: true, force: true });
});

const keys = (facts: { key: string }[]) => facts.map((fact) => fact.key);

async function sessionOf(person: Person, ...userMessages: string[]): Promise<string> {
  const session = await createSession(db, { profileId: 'secretary', personId: person.id });
  for (const content of userMessages) {
    await appendMessage(db, session.id, { role: 'user', content });
    await appendMessage(db, session.id, { role: 'assistant', content: 'Noted.' });
  }
  return session.id;
}

describe("two people's facts", () => {
  it('are saved side by side under one category and key, listed, found and changed each for their person only', async () => {
    const adas = await upsertFact(db, ada.id, { category: 'places', key: 'home_city', value: 'Leipzig' });
    const beas = await upsertFact(db, bea.id, { category: 'places', key: 'home_city', value: 'Halle' });
    expect([adas.change, beas.change]).toEqual(['created', 'created']);
    expect(beas.fact.id).not.toBe(adas.fact.id);
    await upsertFact(db, bea.id, { category: 'preferences', key: 'coffee', value: 'Espresso from Leipzig roasters' });

    expect((await listFacts(db, ada.id)).map((fact) => fact.value)).toEqual(['Leipzig']);
    expect((await listFacts(db, bea.id)).map((fact) => fact.value)).toEqual(['Halle', 'Espresso from Leipzig roasters']);
    expect((await findFactByKey(db, bea.id, 'places', 'home_city'))?.value).toBe('Halle');
    expect(keys(await recentFacts(db, ada.id, 10))).toEqual(['home_city']);

    // Full-text and substring search alike see the searcher's facts only, though "Leipzig" is in both.
    expect((await searchFacts(db, ada.id, 'leipzig')).facts.map((fact) => fact.value)).toEqual(['Leipzig']);
    expect((await searchFacts(db, bea.id, 'leipzig')).facts.map((fact) => fact.value)).toEqual(['Espresso from Leipzig roasters']);
    expect(await searchFacts(db, ada.id, 'espresso')).toEqual({ mode: 'like', facts: [] });
    expect((await searchFacts(db, ada.id, '"eipzi')).facts.map((fact) => fact.value)).toEqual(['Leipzig']);
    expect((await searchFacts(db, ada.id, 'home_city OR coffee')).facts.map((fact) => fact.value)).toEqual(['Leipzig']);

    // Changing one's own fact leaves the other's of the same key as it was.
    expect(await upsertFact(db, ada.id, { category: 'places', key: 'home_city', value: 'Dresden' })).toMatchObject({ change: 'updated', previousValue: 'Leipzig' });
    expect((await findFactByKey(db, bea.id, 'places', 'home_city'))?.value).toBe('Halle');

    // Nobody forgets another's fact, by id or by key.
    expect(await deleteFact(db, ada.id, beas.fact.id)).toBeUndefined();
    expect(await deleteFactByKey(db, ada.id, 'preferences', 'coffee')).toBeUndefined();
    expect(await listFacts(db, bea.id)).toHaveLength(2);
    expect(await deleteFactByKey(db, ada.id, 'places', 'home_city')).toMatchObject({ value: 'Dresden' });
    expect((await findFactByKey(db, bea.id, 'places', 'home_city'))?.value).toBe('Halle');
  });

  it("are never crowded out of a search by another's better matches", async () => {
    for (let index = 0; index < 15; index++) await upsertFact(db, bea.id, { category: 'plants', key: `fern_${index}`, value: 'fern fern fern' });
    await upsertFact(db, ada.id, { category: 'plants', key: 'window', value: 'A fern by the window, and a cactus' });
    const adas = await searchFacts(db, ada.id, 'fern', 10);
    expect(adas.mode).toBe('fts');
    expect(keys(adas.facts)).toEqual(['window']);
    expect((await searchFacts(db, bea.id, 'fern', 10)).facts).toHaveLength(10);
  });

  it("keep a summary each, made stale by that person's changes only", async () => {
    expect(await readSummary(db, bea.id)).toEqual({ content: '', updatedAt: '', stale: false, factsVersion: 0 });
    await upsertFact(db, ada.id, { category: 'people', key: 'sister', value: 'Anna' });
    const adas = await readSummary(db, ada.id);
    expect(adas.stale).toBe(true);
    expect((await readSummary(db, bea.id)).stale).toBe(false);
    await writeSummary(db, ada.id, 'Ada has a sister, Anna.', adas.factsVersion);

    await upsertFact(db, bea.id, { category: 'people', key: 'sister', value: 'Berta' });
    expect(await readSummary(db, ada.id)).toMatchObject({ content: 'Ada has a sister, Anna.', stale: false });
    expect(await readSummary(db, bea.id)).toMatchObject({ content: '', stale: true });
  });

  it("go when their person is removed from the household; the others' stay", async () => {
    await upsertFact(db, ada.id, { category: 'places', key: 'home_city', value: 'Leipzig' });
    await upsertFact(db, bea.id, { category: 'places', key: 'home_city', value: 'Halle' });
    expect(await deletePerson(db, bea.id)).toBe(true);
    expect(await listFacts(db, bea.id)).toEqual([]);
    expect(await readSummary(db, bea.id)).toMatchObject({ content: '', stale: false });
    expect(await searchFacts(db, bea.id, 'halle')).toEqual({ mode: 'like', facts: [] });
    expect((await listFacts(db, ada.id)).map((fact) => fact.value)).toEqual(['Leipzig']);
  });
});

describe('the memory tools', () => {
  const owner = () => memoryOwnerOf({ sessions: () => ({ find: (id) => findSession(db, id), switchProfile: async () => ({ ok: true, switched: false }) }), person: (id) => household.person(id) });

  it("read and write the facts of the session's person, a sub-agent's its parent session's", async () => {
    const adasSession = await sessionOf(ada);
    const beasSession = await sessionOf(bea);
    let changes = 0;
    const save = createMemorySaveTool(db, owner(), () => changes++);
    const search = createMemorySearchTool(db, owner());
    const forget = createMemoryForgetTool(db, owner(), () => changes++);

    expect((await runTool(save, { category: 'preferences', key: 'coffee', value: 'Flat white' }, { sessionId: adasSession })).output).toBe(
      'Saved #1 [preferences] coffee: Flat white',
    );
    expect((await runTool(save, { category: 'preferences', key: 'coffee', value: 'Black, no sugar' }, { sessionId: 'subagent_1', parentSessionId: beasSession, isSubagent: true })).output).toBe(
      'Saved #2 [preferences] coffee: Black, no sugar',
    );
    expect(changes).toBe(2);
    expect((await listFacts(db, bea.id)).map((fact) => fact.value)).toEqual(['Black, no sugar']);

    expect((await runTool(search, { query: 'coffee' }, { sessionId: adasSession })).output).toBe('1 fact, best match first:\n#1 [preferences] coffee: Flat white');
    expect((await runTool(search, { query: 'black sugar' }, { sessionId: adasSession })).output).toBe('No remembered fact matches "black sugar". Try other or fewer words.');

    // Another's fact, by id or by key, is answered as a missing one, and stays.
    expect(await runTool(forget, { id: 2 }, { sessionId: adasSession })).toEqual({
      output: 'There is no remembered fact #2. Use memory_search to find it and its id.',
      success: false,
    });
    expect((await runTool(forget, { category: 'preferences', key: 'coffee' }, { sessionId: beasSession })).output).toBe('Forgot #2 [preferences] coffee: Black, no sugar');
    expect((await listFacts(db, ada.id)).map((fact) => fact.value)).toEqual(['Flat white']);
    expect(changes).toBe(3);
  });

  it("refuse in a guest's session, and in one that is gone, touching nothing", async () => {
    const guestsSession = await sessionOf(gus);
    let changes = 0;
    const tools = [createMemorySaveTool(db, owner(), () => changes++), createMemorySearchTool(db, owner()), createMemoryForgetTool(db, owner(), () => changes++)];
    const calls = [{ category: 'preferences', key: 'coffee', value: 'Tea' }, { query: 'coffee' }, { category: 'preferences', key: 'coffee' }];
    for (const [index, tool] of tools.entries()) {
      expect(await runTool(tool, calls[index]!, { sessionId: guestsSession })).toEqual({
        output: "Guests keep no long-term memory: nothing is remembered, searched or forgotten in a guest's session.",
        success: false,
      });
      expect((await runTool(tool, calls[index]!, { sessionId: 'no-such-session' })).success).toBe(false);
    }
    expect(changes).toBe(0);
    expect(await db.selectFrom('memory_facts').selectAll().execute()).toEqual([]);
  });
});

/** Answers extraction with the facts each transcript line names ("I live in X" → home_city X), and summaries with the facts it was given. */
class RememberingBackend implements LlmBackend {
  readonly id = 'ollama';
  readonly defaultModel = 'remembering';
  readonly extractions: string[] = [];

  async *stream(request: ChatRequest): AsyncGenerator<LlmStreamEvent> {
    const text = String(request.messages.at(-1)?.content ?? '');
    if (request.responseSchema) {
      this.extractions.push(text);
      const facts = [...text.matchAll(/I live in (\w+)/g)].map((match) => ({ category: 'places', key: 'home_city', value: match[1] }));
      yield { type: 'text_delta', delta: JSON.stringify({ facts }) };
    } else {
      yield { type: 'text_delta', delta: `Summary of: ${text.replace('Facts:\n', '')}` };
    }
    yield { type: 'done' };
  }

  async complete(): Promise<CompletionResult> {
    throw new Error('the registry completes through stream()');
  }

  async listModels() {
    return { ok: true as const, models: [] };
  }

  async embed(): Promise<EmbedResult> {
    throw new Error('memory does not embed');
  }
}

describe('extraction and the summary in the prompt', () => {
  it("file facts under the person whose session it was, each hears only their own summary, and a guest's session is passed over", async () => {
    const adasSession = await sessionOf(ada, 'I live in Leipzig.');
    const beasSession = await sessionOf(bea, 'I live in Halle.');
    const guestsSession = await sessionOf(gus, 'I live in Prague.');
    const backend = new RememberingBackend();
    const config = parseConfig({ DATA_DIR: folder });
    const backends = new BackendRegistry({ ollama: backend }, 'ollama', 1, modelLimitsFrom(config));
    const memory = new MemoryService({ db, backends, config, logger: recordingLogger().logger, person: (id) => household.person(id) });

    const report = await memory.runExtraction({ ignoreIdleOf: ada.id });
    // Bea's session is not idle and was not asked for; the guest's is never read.
    expect(report).toEqual({ processed: [{ sessionId: adasSession, personId: ada.id, factsChanged: 1 }], failed: [], summariesUpdated: [ada.id] });
    const second = await memory.runExtraction({ ignoreIdleOf: bea.id });
    expect(second).toEqual({ processed: [{ sessionId: beasSession, personId: bea.id, factsChanged: 1 }], failed: [], summariesUpdated: [bea.id] });
    expect(await memory.runExtraction({ ignoreIdleOf: gus.id })).toEqual({ processed: [], failed: [], summariesUpdated: [] });
    expect(backend.extractions).toHaveLength(2);
    expect(backend.extractions.join('\n')).not.toContain('Prague');

    expect((await listFacts(db, ada.id)).map((fact) => fact.value)).toEqual(['Leipzig']);
    expect((await listFacts(db, bea.id)).map((fact) => fact.value)).toEqual(['Halle']);
    expect(await listFacts(db, gus.id)).toEqual([]);
    // What the guest said is marked read, so it is not read later either (not even if they become an adult).
    expect(await extractionState(db, guestsSession)).toMatchObject({ lastPosition: 2 });
    expect(await sessionsDueForExtraction(db, undefined)).toEqual([]);

    expect(await memory.summary(ada.id)).toBe('Summary of: - places / home_city: Leipzig');
    expect(await memory.summary(bea.id)).toBe('Summary of: - places / home_city: Halle');
    expect(await memory.summary(gus.id)).toBeUndefined();

    const profiles = await ProfileRegistry.open(path.resolve('profiles'));
    const sources = { profiles, backends, tools: new ToolRegistry([]), persona: '', memorySummary: (personId: string) => memory.summary(personId) };
    const remembered = async (sessionId: string) => {
      const setup = await setupForSession(await findSession(db, sessionId), sources);
      if (!setup.ok) throw new Error(setup.error.message);
      return setup.setup.systemMessages.slice(1).map((message) => message.content);
    };
    expect(await remembered(adasSession)).toEqual(['## What I remember about the user\n\nSummary of: - places / home_city: Leipzig']);
    expect(await remembered(beasSession)).toEqual(['## What I remember about the user\n\nSummary of: - places / home_city: Halle']);
    expect(await remembered(guestsSession)).toEqual([]);
  });

  it("a guest hears no summary even if facts were filed under them", async () => {
    await applyExtraction(db, { sessionId: await sessionOf(gus), personId: gus.id }, 0, [{ category: 'places', key: 'home_city', value: 'Prague' }]);
    await writeSummary(db, gus.id, 'The guest lives in Prague.', (await readSummary(db, gus.id)).factsVersion);
    const config = parseConfig({ DATA_DIR: folder });
    const backends = new BackendRegistry({ ollama: new RememberingBackend() }, 'ollama', 1, modelLimitsFrom(config));
    const memory = new MemoryService({ db, backends, config, logger: recordingLogger().logger, person: (id) => household.person(id) });
    expect(await memory.summary(gus.id)).toBeUndefined();
    expect(await memory.summary(ada.id)).toBeUndefined();
  });
});

describe('a session shared with the household', () => {
  it("keeps no memory: the tools refuse, nothing said in it is extracted, and its prompt holds no summary of its person", async () => {
    const shared = await sessionOf(ada, 'I live in Leipzig.');
    await updateSession(db, shared, { shared: true });
    await upsertFact(db, ada.id, { category: 'preferences', key: 'coffee', value: 'Flat white' });
    await writeSummary(db, ada.id, 'Ada drinks flat whites.', (await readSummary(db, ada.id)).factsVersion);
    const owner = memoryOwnerOf({ sessions: () => ({ find: (id) => findSession(db, id), switchProfile: async () => ({ ok: true, switched: false }) }), person: (id) => household.person(id) });
    for (const [tool, call] of [
      [createMemorySearchTool(db, owner), { query: 'coffee' }],
      [createMemorySaveTool(db, owner, () => {}), { category: 'places', key: 'home_city', value: 'Leipzig' }],
      [createMemoryForgetTool(db, owner, () => {}), { category: 'preferences', key: 'coffee' }],
    ] as const) {
      expect(await runTool(tool, call, { sessionId: shared })).toEqual({ output: sharedSessionsKeepNoMemory, success: false });
    }
    expect((await listFacts(db, ada.id)).map((fact) => fact.value)).toEqual(['Flat white']);

    const backend = new RememberingBackend();
    const config = parseConfig({ DATA_DIR: folder });
    const backends = new BackendRegistry({ ollama: backend }, 'ollama', 1, modelLimitsFrom(config));
    const memory = new MemoryService({ db, backends, config, logger: recordingLogger().logger, person: (id) => household.person(id) });
    expect(await memory.runExtraction({ ignoreIdleOf: ada.id })).toEqual({ processed: [], failed: [], summariesUpdated: [] });
    expect(backend.extractions).toEqual([]);

    const profiles = await ProfileRegistry.open(path.resolve('profiles'));
    const sources = { profiles, backends, tools: new ToolRegistry([]), persona: '', memorySummary: (personId: string) => memory.summary(personId) };
    const setup = await setupForSession(await findSession(db, shared), sources);
    if (!setup.ok) throw new Error(setup.error.message);
    expect(setup.setup.systemMessages.slice(1)).toEqual([]);
    expect(await memory.summary(ada.id)).toBe('Ada drinks flat whites.');
  });
});

describe('the migration of memory to people', () => {
  it("gives an install's facts and summary to the first owner, keeping ids, the full-text index and the count of ids", async () => {
    const file = path.join(folder, 'before.db');
    const before = new Kysely<any>({ dialect: new SqliteDialect({ database: new SqliteDatabase(file) }) });
    expect((await migratorFor(before).migrateTo('2026-11-28T20-people')).error).toBeUndefined();
    const at = '2026-11-28T08:00:00.000Z';
    const fact = (category: string, key: string, value: string) => ({ category, key, value, created_at: at, updated_at: at });
    await before.insertInto('memory_facts').values([fact('places', 'home_city', 'Leipzig'), fact('environment', 'nas', 'Synology'), fact('people', 'sister', 'Anna')]).execute();
    await before.deleteFrom('memory_facts').where('key', '=', 'sister').execute();
    await before.updateTable('memory_summary').set({ content: 'The user lives in Leipzig.', updated_at: at, summarised_version: 3 }).execute();
    const owner = (await before.selectFrom('people').select('id').executeTakeFirstOrThrow()).id as string;
    await before.destroy();

    const after = await openDatabase(file);
    try {
      expect((await listFacts(after, owner)).map((entry) => [entry.id, entry.key])).toEqual([
        [2, 'nas'],
        [1, 'home_city'],
      ]);
      expect(await readSummary(after, owner)).toEqual({ content: 'The user lives in Leipzig.', updatedAt: at, stale: true, factsVersion: 4 });
      expect((await searchFacts(after, owner, 'synology')).facts.map((entry) => entry.id)).toEqual([2]);
      // The deleted fact's id 3 is not given again.
      expect((await upsertFact(after, owner, { category: 'people', key: 'brother', value: 'Ben' })).fact.id).toBe(4);
      expect((await readSummary(after, owner)).factsVersion).toBe(5);
    } finally {
      await after.destroy();
    }
  });
});
