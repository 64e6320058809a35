import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parseFactsReply, transcriptBatches } from '../src/memory/extraction.ts';
import { openDatabase, type Db } from '../src/store/database.ts';
import {
  applyExtraction,
  deleteFact,
  deleteFactByKey,
  displayMessagesAfter,
  extractionState,
  findFactByKey,
  listFacts,
  readSummary,
  searchFacts,
  sessionsDueForExtraction,
  upsertFact,
  writeSummary,
} from '../src/store/memory-repository.ts';
import { appendMessage } from '../src/store/messages-repository.ts';
import { findFirstOwner } from '../src/store/people-repository.ts';
import { createSession, deleteSession } from '../src/store/sessions-repository.ts';
import { createMemoryForgetTool } from '../src/tools/builtin/memory-forget.ts';
import { createMemorySaveTool } from '../src/tools/builtin/memory-save.ts';
import type { MemoryOwnerOf } from '../src/tools/builtin/memory-owner.ts';
import { createMemorySearchTool } from '../src/tools/builtin/memory-search.ts';
import { runTool } from './support/tool-context.ts';

let directory: string;
let db: Db;
/** The owner a new Hearth starts with: a household of one, whose memory every case here uses. */
let owner: string;
const asOwner: MemoryOwnerOf = async () => ({ ok: true, personId: owner });

beforeEach(async () => {
  directory = await fs.mkdtemp(path.join(os.tmpdir(), 'hearth-memory-'));
  db = await openDatabase(path.join(directory, 'test.db'));
  owner = (await findFirstOwner(db))!.id;
});

afterEach(async () => {
  await db.destroy();
  await fs.rm(directory, { recursive: true, force: true });
});

const minutesAgo = (minutes: number) => new Date(Date.now() - minutes * 60_000).toISOString();

async function setLastActive(sessionId: string, iso: string): Promise<void> {
  await db.updateTable('sessions').set({ last_active: iso }).where('id', '=', sessionId).execute();
}

async function keysFound(query: string): Promise<string[]> {
  return (await searchFacts(db, owner, query)).facts.map((fact) => fact.key);
}

describe('memory facts', () => {
  it('creates, replaces and keeps facts unique per normalised category and key', async () => {
    const created = await upsertFact(db, owner, { category: ' Environment ', key: 'NAS  Address', value: ' 192.168.1.20 ' });
    expect(created.change).toBe('created');
    expect(created.fact).toMatchObject({ category: 'environment', key: 'nas_address', value: '192.168.1.20' });

    const updated = await upsertFact(db, owner, { category: 'environment', key: 'nas_address', value: '192.168.1.21' });
    expect(updated).toMatchObject({ change: 'updated', previousValue: '192.168.1.20', fact: { id: created.fact.id, value: '192.168.1.21' } });
    expect(updated.fact.createdAt).toBe(created.fact.createdAt);

    const unchanged = await upsertFact(db, owner, { category: 'ENVIRONMENT', key: 'nas address', value: '192.168.1.21' });
    expect(unchanged.change).toBe('unchanged');
    expect((await listFacts(db, owner)).map((fact) => fact.value)).toEqual(['192.168.1.21']);
    await expect(upsertFact(db, owner, { category: ' ', key: 'x', value: 'y' })).rejects.toThrow(/non-empty/);
  });

  it('marks the summary stale on every real change, not on saving the same value', async () => {
    expect(await readSummary(db, owner)).toMatchObject({ content: '', stale: false, factsVersion: 0 });
    await upsertFact(db, owner, { category: 'people', key: 'sister', value: 'Anna' });
    const afterCreate = await readSummary(db, owner);
    expect(afterCreate.stale).toBe(true);
    await writeSummary(db, owner, 'The user has a sister, Anna.', afterCreate.factsVersion);
    expect(await readSummary(db, owner)).toMatchObject({ content: 'The user has a sister, Anna.', stale: false });

    await upsertFact(db, owner, { category: 'people', key: 'sister', value: 'Anna' });
    expect((await readSummary(db, owner)).stale).toBe(false);
    await upsertFact(db, owner, { category: 'people', key: 'sister', value: 'Anna Berg' });
    expect((await readSummary(db, owner)).stale).toBe(true);
    const version = (await readSummary(db, owner)).factsVersion;
    await writeSummary(db, owner, 'x', version);
    await deleteFactByKey(db, owner, 'People', 'Sister');
    expect((await readSummary(db, owner)).stale).toBe(true);
  });

  it('forgets by id and by category and key, answering what was deleted', async () => {
    const { fact } = await upsertFact(db, owner, { category: 'places', key: 'home_city', value: 'Leipzig' });
    await upsertFact(db, owner, { category: 'places', key: 'work_city', value: 'Halle' });
    expect(await deleteFact(db, owner, fact.id)).toMatchObject({ key: 'home_city' });
    expect(await deleteFact(db, owner, fact.id)).toBeUndefined();
    expect(await deleteFactByKey(db, owner, 'Places', 'Work City')).toMatchObject({ value: 'Halle' });
    expect(await deleteFactByKey(db, owner, 'places', 'work_city')).toBeUndefined();
    expect(await listFacts(db, owner)).toEqual([]);
    expect(await keysFound('Leipzig Halle')).toEqual([]);
  });
});

describe('memory search', () => {
  beforeEach(async () => {
    const facts: [string, string, string][] = [
      ['environment', 'nas_address', 'Synology NAS at 192.168.1.20'],
      ['environment', 'nas_backup_path', '/volume1/backups on the Synology NAS'],
      ['environment', 'router', 'FritzBox 7590 at 192.168.1.1'],
      ['environment', 'postgres_version', 'PostgreSQL 16 on the home server'],
      ['environment', 'home_server', 'Debian 12 box called atlas'],
      ['preferences', 'coffee', 'Flat white, no sugar'],
      ['preferences', 'units', 'Metric units and 24-hour time'],
      ['people', 'sister', 'Anna, lives in Zürich'],
      ['projects', 'garden', 'Raised beds for tomatoes this spring'],
      ['places', 'home_city', 'Leipzig'],
    ];
    for (const [category, key, value] of facts) await upsertFact(db, owner, { category, key, value });
  });

  it('ranks by BM25: more of the query words, and rarer ones, come first', async () => {
    // Both NAS facts mention "synology"; only one also has "backups".
    expect((await keysFound('synology backups')).slice(0, 2)).toEqual(['nas_backup_path', 'nas_address']);
    // "192.168.1" appears in two facts, "fritzbox" in one: the rarer word wins.
    expect((await keysFound('fritzbox nas')).slice(0, 1)).toEqual(['router']);
    expect((await searchFacts(db, owner, 'synology backups')).mode).toBe('fts');
  });

  it('reads plain questions as words: stop words dropped, stems and accents folded', async () => {
    expect(await keysFound('who is my sister?')).toEqual(['sister']);
    expect((await keysFound('what is my sister called?'))[0]).toBe('sister');
    expect(await keysFound('zurich')).toEqual(['sister']);
    expect(await keysFound('tomato')).toEqual(['garden']);
    expect((await keysFound('home')).sort()).toEqual(['home_city', 'home_server', 'postgres_version']);
  });

  it('accepts FTS5 syntax as written: OR, phrases, prefixes', async () => {
    expect((await keysFound('coffee OR router')).sort()).toEqual(['coffee', 'router']);
    expect((await keysFound('"home server"')).sort()).toEqual(['home_server', 'postgres_version']);
    // A query that finds nothing as written is retried as an OR of its words.
    expect((await keysFound('"server home"')).sort()).toEqual(['home_city', 'home_server', 'postgres_version']);
    expect(await keysFound('fritz*')).toEqual(['router']);
  });

  it('falls back to LIKE for a query FTS5 cannot parse or match', async () => {
    const unparseable = await searchFacts(db, owner, '"gres');
    expect(unparseable.mode).toBe('like');
    expect(unparseable.facts.map((fact) => fact.key)).toEqual(['postgres_version']);
    const syntaxError = await searchFacts(db, owner, 'atlas AND (');
    expect(syntaxError.facts.map((fact) => fact.key)).toEqual(['home_server']);
    // LIKE wildcards in the query are matched literally.
    expect((await searchFacts(db, owner, '%')).facts).toEqual([]);
    expect(await searchFacts(db, owner, '"t_m')).toEqual({ mode: 'like', facts: [] });
    expect(await searchFacts(db, owner, '   ')).toEqual({ mode: 'like', facts: [] });
  });

  it('stays in step with updates and deletes', async () => {
    await upsertFact(db, owner, { category: 'preferences', key: 'coffee', value: 'Espresso' });
    expect(await keysFound('flat white')).toEqual([]);
    expect(await keysFound('espresso')).toEqual(['coffee']);
    await deleteFactByKey(db, owner, 'preferences', 'coffee');
    expect(await keysFound('espresso')).toEqual([]);
  });
});

describe('extraction state', () => {
  it('finds idle sessions with unextracted user messages, and remembers how far they were read', async () => {
    const idle = await createSession(db, { profileId: 'secretary' });
    const active = await createSession(db, { profileId: 'secretary' });
    const empty = await createSession(db, { profileId: 'secretary' });
    await appendMessage(db, idle.id, { role: 'user', content: 'I live in Leipzig.' });
    await appendMessage(db, idle.id, { role: 'assistant', content: 'Noted.' });
    await appendMessage(db, active.id, { role: 'user', content: 'Hello' });
    await setLastActive(idle.id, minutesAgo(40));
    await setLastActive(empty.id, minutesAgo(40));

    expect(await sessionsDueForExtraction(db, minutesAgo(30))).toEqual([{ sessionId: idle.id, personId: owner, afterPosition: 0, shared: false }]);
    expect((await sessionsDueForExtraction(db)).map((due) => due.sessionId).sort()).toEqual([idle.id, active.id].sort());

    const messages = await displayMessagesAfter(db, idle.id, 0);
    expect(messages.map((entry) => [entry.position, entry.message.content])).toEqual([[1, 'I live in Leipzig.'], [2, 'Noted.']]);
    const saved = await applyExtraction(db, { sessionId: idle.id, personId: owner }, 2, [{ category: 'places', key: 'home_city', value: 'Leipzig' }]);
    expect(saved.map((entry) => entry.change)).toEqual(['created']);
    expect(await extractionState(db, idle.id)).toEqual({ extractedAt: expect.any(String), lastPosition: 2 });
    expect(await sessionsDueForExtraction(db, minutesAgo(30))).toEqual([]);

    // New activity makes it due again, from where the last extraction stopped.
    await appendMessage(db, idle.id, { role: 'user', content: 'Actually I moved to Halle.' });
    await setLastActive(idle.id, minutesAgo(40));
    expect(await sessionsDueForExtraction(db, minutesAgo(30))).toEqual([{ sessionId: idle.id, personId: owner, afterPosition: 2, shared: false }]);
    expect((await displayMessagesAfter(db, idle.id, 2)).map((entry) => entry.message.content)).toEqual(['Actually I moved to Halle.']);

    await deleteSession(db, idle.id);
    expect(await extractionState(db, idle.id)).toBeUndefined();
    // A session deleted while it was being extracted leaves no state row behind (its facts stay).
    await applyExtraction(db, { sessionId: idle.id, personId: owner }, 3, [{ category: 'places', key: 'home_city', value: 'Halle' }]);
    expect(await extractionState(db, idle.id)).toBeUndefined();
    expect((await findFactByKey(db, owner, 'places', 'home_city'))?.value).toBe('Halle');
  });
});

describe('extraction input and reply', () => {
  it('builds transcripts with tool calls and results cut short, in batches that fit', () => {
    const longResult = 'x'.repeat(5_000);
    const messages = [
      { position: 1, message: { id: 1, role: 'user' as const, content: 'Check the NAS', created_at: '' } },
      {
        position: 2,
        message: { id: 2, role: 'assistant' as const, content: '', tool_calls: [{ id: 'c', name: 'terminal', arguments: { command: 'df -h' } }], created_at: '' },
      },
      { position: 3, message: { id: 3, role: 'tool' as const, name: 'terminal', content: longResult, created_at: '' } },
      { position: 4, message: { id: 4, role: 'assistant' as const, content: 'It is 40% full.', created_at: '' } },
    ];
    const [whole, ...rest] = transcriptBatches(messages, 10_000);
    expect(rest).toEqual([]);
    expect(whole!.throughPosition).toBe(4);
    expect(whole!.transcript).toContain('User: Check the NAS');
    expect(whole!.transcript).toContain('Assistant called terminal({"command":"df -h"})');
    expect(whole!.transcript).toContain('Result of terminal: xxx');
    expect(whole!.transcript).toContain('[4500 more characters]');
    expect(whole!.transcript.length).toBeLessThan(1_000);

    const small = transcriptBatches(messages, 100);
    expect(small.map((batch) => batch.throughPosition)).toEqual([2, 3, 4]);
    expect(transcriptBatches([], 100)).toEqual([]);
  });

  it('accepts only JSON matching the schema, normalising and de-duplicating facts', () => {
    expect(parseFactsReply('{"facts":[]}')).toEqual({ ok: true, facts: [] });
    expect(
      parseFactsReply('```json\n{"facts":[{"category":" Places ","key":"Home City","value":"Leipzig"},{"category":"places","key":"home_city","value":"Halle"},{"category":"x","key":"","value":"dropped"}]}\n```'),
    ).toEqual({ ok: true, facts: [{ category: 'places', key: 'home_city', value: 'Halle' }] });
    expect(parseFactsReply('Sure! Here are the facts.')).toMatchObject({ ok: false, message: expect.stringContaining('not JSON') });
    expect(parseFactsReply('{"facts":[{"category":"places","key":"home_city"}]}')).toMatchObject({
      ok: false,
      message: expect.stringContaining('schema'),
    });
    expect(parseFactsReply('{"fact":[]}').ok).toBe(false);
  });
});

describe('memory tools', () => {
  it('memory_save saves, updates and refuses empty or over-long fields; changes are announced', async () => {
    let changes = 0;
    const save = createMemorySaveTool(db, asOwner, () => changes++);
    expect(await runTool(save, { category: 'Preferences', key: 'coffee', value: 'Flat white' })).toEqual({
      output: 'Saved #1 [preferences] coffee: Flat white',
      success: true,
    });
    expect((await runTool(save, { category: 'preferences', key: 'coffee', value: 'Espresso' })).output).toBe(
      'Updated #1 [preferences] coffee: Espresso (was: Flat white)',
    );
    expect((await runTool(save, { category: 'preferences', key: 'coffee', value: 'Espresso' })).output).toMatch(/^Already remembered/);
    expect(changes).toBe(2);
    expect(await runTool(save, { category: 'preferences', key: '  ', value: 'x' })).toEqual({ output: 'Send key: it must not be empty.', success: false });
    expect((await runTool(save, { category: 'preferences', key: 'k'.repeat(200), value: 'x' })).output).toMatch(/key is at most 128/);
  });

  it('memory_search answers ranked facts with ids, or says nothing matched', async () => {
    await upsertFact(db, owner, { category: 'environment', key: 'nas_address', value: '192.168.1.20' });
    await upsertFact(db, owner, { category: 'environment', key: 'nas_backup_path', value: '/volume1/backups' });
    const search = createMemorySearchTool(db, asOwner);
    expect((await runTool(search, { query: 'nas backup' })).output).toBe(
      '2 facts, best match first:\n#2 [environment] nas_backup_path: /volume1/backups\n#1 [environment] nas_address: 192.168.1.20',
    );
    expect(await runTool(search, { query: 'printer' })).toEqual({ output: 'No remembered fact matches "printer". Try other or fewer words.', success: true });
    expect((await runTool(search, { query: ' ' })).success).toBe(false);
  });

  it('memory_forget deletes by id or by category and key', async () => {
    let changes = 0;
    const forget = createMemoryForgetTool(db, asOwner, () => changes++);
    const { fact } = await upsertFact(db, owner, { category: 'people', key: 'sister', value: 'Anna' });
    await upsertFact(db, owner, { category: 'places', key: 'home_city', value: 'Leipzig' });
    expect((await runTool(forget, { id: fact.id })).output).toBe('Forgot #1 [people] sister: Anna');
    expect(await runTool(forget, { id: fact.id })).toEqual({
      output: 'There is no remembered fact #1. Use memory_search to find it and its id.',
      success: false,
    });
    expect((await runTool(forget, { category: 'Places', key: 'home city' })).output).toBe('Forgot #2 [places] home_city: Leipzig');
    expect((await runTool(forget, { category: 'places' })).output).toBe('Send id (from memory_search), or both category and key.');
    expect(changes).toBe(2);
    expect(await listFacts(db, owner)).toEqual([]);
  });
});
