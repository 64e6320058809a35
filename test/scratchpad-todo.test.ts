import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openDatabase, type Db } from '../src/store/database.ts';
import { createSession, deleteSession } from '../src/store/sessions-repository.ts';
import { appendSection, clearSections, readAllSections, readSection, writeSection } from '../src/store/scratchpad-repository.ts';
import { readTodoList, saveTodoList } from '../src/store/todo-repository.ts';
import { createScratchpadTool } from '../src/tools/builtin/scratchpad.ts';
import { createTodoTool } from '../src/tools/builtin/todo.ts';
import type { Tool } from '../src/tools/tool.ts';
import { runTool } from './support/tool-context.ts';

let directory: string;
let db: Db;

function run(tool: Tool, args: Record<string, unknown>, sessionId = 'session-a') {
  return runTool(tool, args, { sessionId });
}

beforeEach(async () => {
  directory = await fs.mkdtemp(path.join(os.tmpdir(), 'hearth-'));
  db = await openDatabase(path.join(directory, 'test.db'));
});

afterEach(async () => {
  await db.destroy();
  await fs.rm(directory, { recursive: true, force: true });
});

describe('scratchpad repository', () => {
  it('writes, appends, reads in name order and clears', async () => {
    await writeSection(db, 's', 'beta', 'one');
    await writeSection(db, 's', 'beta', 'two');
    await appendSection(db, 's', 'beta', 'three');
    await appendSection(db, 's', 'alpha', 'first');
    expect((await readSection(db, 's', 'beta'))?.content).toBe('two\nthree');
    expect((await readAllSections(db, 's')).map((entry) => entry.section)).toEqual(['alpha', 'beta']);
    expect(await readSection(db, 's', 'missing')).toBeUndefined();
    expect(await clearSections(db, 's', 'alpha')).toBe(1);
    expect(await clearSections(db, 's', 'alpha')).toBe(0);
    await writeSection(db, 's', 'gamma', 'x');
    expect(await clearSections(db, 's')).toBe(2);
    expect(await readAllSections(db, 's')).toEqual([]);
  });

  it('keeps every text of concurrent appends', async () => {
    await Promise.all(Array.from({ length: 10 }, (_, number) => appendSection(db, 's', 'log', `line ${number}`)));
    const lines = (await readSection(db, 's', 'log'))?.content.split('\n') ?? [];
    expect(lines.sort()).toEqual(Array.from({ length: 10 }, (_, number) => `line ${number}`).sort());
  });
});

describe('todo repository', () => {
  it('reads an empty list when none was saved and round-trips items', async () => {
    expect(await readTodoList(db, 's')).toEqual([]);
    await saveTodoList(db, 's', [{ text: 'a', status: 'done' }]);
    await saveTodoList(db, 's', [{ text: 'b', status: 'in_progress' }]);
    expect(await readTodoList(db, 's')).toEqual([{ text: 'b', status: 'in_progress' }]);
  });
});

describe('scratchpad tool', () => {
  it('has a short description and a closed schema', () => {
    const tool = createScratchpadTool(db);
    expect(tool.name).toBe('scratchpad');
    expect(tool.parameters).toMatchObject({ type: 'object', additionalProperties: false, required: ['action'] });
    expect(tool.description.length).toBeLessThan(200);
  });

  it('writes, appends, reads one or all, and lists with sizes', async () => {
    const tool = createScratchpadTool(db);
    expect(await run(tool, { action: 'write', section: ' plan ', content: 'step one' })).toEqual({
      output: 'Wrote section "plan" (8 chars).',
      success: true,
    });
    expect((await run(tool, { action: 'append', section: 'plan', content: 'step two' })).output).toContain('now 17 chars');
    expect((await run(tool, { action: 'append', section: 'findings', content: 'disk 91% full' })).success).toBe(true);
    expect((await run(tool, { action: 'write', section: 'findings', content: 'disk 40% full' })).success).toBe(true);

    expect(await run(tool, { action: 'read', section: 'plan' })).toEqual({ output: 'step one\nstep two', success: true });
    expect((await run(tool, { action: 'read' })).output).toBe('## findings\ndisk 40% full\n\n## plan\nstep one\nstep two');
    expect((await run(tool, { action: 'read', section: '  ' })).output).toContain('## findings');
    expect((await run(tool, { action: 'list' })).output).toBe('Sections:\n- findings (13 chars)\n- plan (17 chars)');
  });

  it('reads and lists an empty scratchpad as a helpful sentence', async () => {
    const tool = createScratchpadTool(db);
    for (const action of ['read', 'list']) {
      const result = await run(tool, { action });
      expect(result.success).toBe(true);
      expect(result.output).toMatch(/empty.*"write"/);
    }
  });

  it('clears one section or all of them', async () => {
    const tool = createScratchpadTool(db);
    await run(tool, { action: 'write', section: 'a', content: '1' });
    await run(tool, { action: 'write', section: 'b', content: '2' });
    await run(tool, { action: 'write', section: 'c', content: '3' });
    expect((await run(tool, { action: 'clear', section: 'a' })).output).toBe('Cleared section "a".');
    const missing = await run(tool, { action: 'clear', section: 'a' });
    expect(missing.success).toBe(true);
    expect(missing.output).toBe('There was no section "a" to clear. Existing sections: "b", "c".');
    expect((await run(tool, { action: 'clear' })).output).toBe('Cleared 2 sections.');
    expect((await run(tool, { action: 'clear' })).output).toBe('The scratchpad was already empty.');
  });

  it('reports bad requests as failures that say what to send', async () => {
    const tool = createScratchpadTool(db);
    const cases: Array<[Record<string, unknown>, RegExp]> = [
      [{ action: 'write', content: 'text' }, /Send section/],
      [{ action: 'append', section: '   ', content: 'text' }, /Send section/],
      [{ action: 'write', section: 'plan' }, /Send content/],
      [{ action: 'append', section: 'plan', content: '  ' }, /Send content/],
      [{ action: 'write', section: 'x'.repeat(65), content: 'text' }, /at most 64 characters/],
      [{ action: 'read', section: 'nowhere' }, /no section "nowhere".*none yet/],
      [{ action: 'erase' }, /Unknown action "erase"/],
    ];
    for (const [args, message] of cases) {
      const result = await run(tool, args);
      expect(result.success, JSON.stringify(args)).toBe(false);
      expect(result.output).toMatch(message);
    }
    expect((await run(tool, { action: 'write', section: 'x'.repeat(64), content: 'ok' })).success).toBe(true);
    expect((await run(tool, { action: 'read', section: 'nowhere' })).output).toContain(`"${'x'.repeat(64)}"`);
  });
});

describe('todo tool', () => {
  it('has a short description and a closed schema', () => {
    const tool = createTodoTool(db);
    expect(tool.name).toBe('todo');
    expect(tool.parameters).toMatchObject({ type: 'object', additionalProperties: false, required: ['action'] });
    expect(tool.description.length).toBeLessThan(200);
  });

  it('sets, updates and reads the checklist, rendering it every time', async () => {
    const tool = createTodoTool(db);
    expect(await run(tool, { action: 'set', items: ['Check disk usage', ' Rotate logs ', 'Restart nginx'] })).toEqual({
      output: 'Todo (0/3 done):\n1. [ ] Check disk usage\n2. [ ] Rotate logs\n3. [ ] Restart nginx',
      success: true,
    });
    await run(tool, { action: 'update', index: 1, status: 'done' });
    expect(await run(tool, { action: 'update', index: 2, status: 'in_progress' })).toEqual({
      output: 'Todo (1/3 done):\n1. [x] Check disk usage\n2. [~] Rotate logs\n3. [ ] Restart nginx',
      success: true,
    });
    expect((await run(tool, { action: 'read' })).output).toBe(
      'Todo (1/3 done):\n1. [x] Check disk usage\n2. [~] Rotate logs\n3. [ ] Restart nginx',
    );
    expect((await run(tool, { action: 'update', index: 1, status: 'pending' })).output).toContain('1. [ ] Check disk usage');
    expect((await run(tool, { action: 'set', items: ['Only step'] })).output).toBe('Todo (0/1 done):\n1. [ ] Only step');
  });

  it('reads an empty checklist as a sentence saying how to set one', async () => {
    const result = await run(createTodoTool(db), { action: 'read' });
    expect(result.success).toBe(true);
    expect(result.output).toMatch(/no todo list.*"set"/);
  });

  it('reports bad requests as failures that say what to send', async () => {
    const tool = createTodoTool(db);
    expect((await run(tool, { action: 'update', index: 1, status: 'done' })).output).toMatch(/no todo list to update.*"set"/);
    const before: Array<[Record<string, unknown>, RegExp]> = [
      [{ action: 'set' }, /Send items/],
      [{ action: 'set', items: [] }, /Send items/],
      [{ action: 'set', items: ['a', ' '] }, /Item 2 is empty/],
    ];
    for (const [args, message] of before) {
      const result = await run(tool, args);
      expect(result.success, JSON.stringify(args)).toBe(false);
      expect(result.output).toMatch(message);
    }

    await run(tool, { action: 'set', items: ['a', 'b'] });
    const cases: Array<[Record<string, unknown>, RegExp]> = [
      [{ action: 'update', status: 'done' }, /Send index.*1-2/s],
      [{ action: 'update', index: 0, status: 'done' }, /Index 0 is out of range; items are numbered 1-2/],
      [{ action: 'update', index: 3, status: 'done' }, /Index 3 is out of range.*\n\nTodo \(0\/2 done\)/s],
      [{ action: 'update', index: 1.5, status: 'done' }, /Index 1.5 is out of range/],
      [{ action: 'update', index: 1 }, /Send status: one of "pending", "in_progress", "done"/],
      [{ action: 'update', index: 1, status: 'finished' }, /Send status/],
      [{ action: 'finish' }, /Unknown action "finish"/],
    ];
    for (const [args, message] of cases) {
      const result = await run(tool, args);
      expect(result.success, JSON.stringify(args)).toBe(false);
      expect(result.output).toMatch(message);
    }
    expect((await run(tool, { action: 'read' })).output).toBe('Todo (0/2 done):\n1. [ ] a\n2. [ ] b');
  });
});

describe('per-session state', () => {
  it('keeps two sessions apart, including sub-agents', async () => {
    const scratchpad = createScratchpadTool(db);
    const todo = createTodoTool(db);
    await run(scratchpad, { action: 'write', section: 'plan', content: 'mine' }, 'session-a');
    await run(scratchpad, { action: 'write', section: 'plan', content: 'theirs' }, 'subagent_0123456789ab');
    await run(todo, { action: 'set', items: ['a-step'] }, 'session-a');
    await run(todo, { action: 'set', items: ['b-step'] }, 'subagent_0123456789ab');

    expect((await run(scratchpad, { action: 'read', section: 'plan' }, 'session-a')).output).toBe('mine');
    expect((await run(scratchpad, { action: 'read', section: 'plan' }, 'subagent_0123456789ab')).output).toBe('theirs');
    expect((await run(todo, { action: 'read' }, 'session-a')).output).toContain('a-step');
    expect((await run(todo, { action: 'read' }, 'subagent_0123456789ab')).output).toContain('b-step');

    await run(scratchpad, { action: 'clear' }, 'session-a');
    expect((await run(scratchpad, { action: 'read', section: 'plan' }, 'subagent_0123456789ab')).output).toBe('theirs');
  });

  it('survives closing and reopening the database file', async () => {
    await run(createScratchpadTool(db), { action: 'write', section: 'plan', content: 'remember me' });
    await run(createTodoTool(db), { action: 'set', items: ['persist'] });
    await run(createTodoTool(db), { action: 'update', index: 1, status: 'done' });
    await db.destroy();

    db = await openDatabase(path.join(directory, 'test.db'));
    expect((await run(createScratchpadTool(db), { action: 'read', section: 'plan' })).output).toBe('remember me');
    expect((await run(createTodoTool(db), { action: 'read' })).output).toBe('Todo (1/1 done):\n1. [x] persist');
  });

  it('is removed when its session is deleted', async () => {
    const session = await createSession(db, { profileId: 'secretary' });
    const other = await createSession(db, { profileId: 'secretary' });
    for (const sessionId of [session.id, other.id]) {
      await run(createScratchpadTool(db), { action: 'write', section: 'plan', content: 'note' }, sessionId);
      await run(createTodoTool(db), { action: 'set', items: ['step'] }, sessionId);
    }

    expect(await deleteSession(db, session.id)).toBe(true);
    expect(await readAllSections(db, session.id)).toEqual([]);
    expect(await readTodoList(db, session.id)).toEqual([]);
    expect((await run(createScratchpadTool(db), { action: 'read' }, session.id)).output).toMatch(/empty/);
    expect((await run(createTodoTool(db), { action: 'read' }, session.id)).output).toMatch(/no todo list/);
    expect(await readAllSections(db, other.id)).toHaveLength(1);
    expect(await readTodoList(db, other.id)).toHaveLength(1);
  });
});
