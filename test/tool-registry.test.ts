// The tool-source seam (issue 18): built-ins, user tools and each MCP server are sources of one
// registry, each replacing or removing its tools as a set.
import { describe, expect, it } from 'vitest';
import { parseConfig } from '../src/config.ts';
import { ProfileRegistry } from '../src/profiles/profile-registry.ts';
import { openDatabase } from '../src/store/database.ts';
import { createToolRegistry } from '../src/tools/builtin/index.ts';
import { ToolRegistry } from '../src/tools/tool-registry.ts';
import type { Tool } from '../src/tools/tool.ts';
import { compileArgumentsValidator } from '../src/tools/validation.ts';
import { withJail } from './support/jail.ts';

function tool(name: string, parameters: Record<string, unknown> = { type: 'object', properties: {} }): Tool {
  return { name, description: `The ${name} tool.`, parameters, execute: async () => name };
}

function changesOf(registry: ToolRegistry): string[] {
  const changes: string[] = [];
  registry.on('changed', (sourceId) => changes.push(sourceId));
  return changes;
}

describe('tool registry sources', () => {
  it('sets each tool’s source and server, and replaces one source’s set at once, announcing it', () => {
    const registry = new ToolRegistry([tool('terminal')]);
    const changes = changesOf(registry);
    const user = registry.addSource('user', 'user');
    const notes = registry.addSource('mcp:notes', 'mcp');

    expect(user.replace([tool('weather'), tool('jokes')])).toEqual([]);
    expect(notes.replace([tool('notes__search'), tool('notes__create')])).toEqual([]);
    expect(registry.summaries().map(({ name, source, server }) => [name, source, server])).toEqual([
      ['terminal', 'builtin', undefined],
      ['weather', 'user', undefined],
      ['jokes', 'user', undefined],
      ['notes__search', 'mcp', 'notes'],
      ['notes__create', 'mcp', 'notes'],
    ]);

    notes.replace([tool('notes__search')]);
    expect(registry.get('notes__create')).toBeUndefined();
    expect(registry.get('notes__search')).toMatchObject({ source: 'mcp', origin: 'mcp:notes' });
    expect(registry.get('weather')).toMatchObject({ source: 'user', origin: 'user' });
    expect(changes).toEqual(['user', 'mcp:notes', 'mcp:notes']);
  });

  it('keeps a name with the first source holding it and refuses it to a later one, or a schema that does not compile', () => {
    const registry = new ToolRegistry([tool('terminal')]);
    const user = registry.addSource('user', 'user');
    const server = registry.addSource('mcp:shell', 'mcp');
    user.replace([tool('weather')]);

    const refused = server.replace([tool('terminal'), tool('weather'), tool('shell__run'), tool('shell__run'), tool('shell__bad', { type: 'nonsense' })]);
    expect(refused.map(({ name }) => name)).toEqual(['terminal', 'weather', 'shell__run', 'shell__bad']);
    expect(refused[0]!.message).toBe('"terminal" is already the name of a built-in tool; choose another name.');
    expect(refused[1]!.message).toBe('"weather" is already the name of a user tool; choose another name.');
    expect(refused[3]!.message).toMatch(/^Its parameters are not a valid JSON Schema/);
    expect(registry.get('terminal')?.source).toBe('builtin');
    expect(registry.get('shell__run')?.source).toBe('mcp');
    expect(() => registry.addSource('user', 'user')).toThrow(/already registered/);
  });

  it('removes a source with its tools, once', () => {
    const registry = new ToolRegistry();
    const server = registry.addSource('mcp:notes', 'mcp');
    server.replace([tool('notes__search')]);
    const changes = changesOf(registry);
    server.remove();
    server.remove();
    expect(registry.get('notes__search')).toBeUndefined();
    expect(changes).toEqual(['mcp:notes']);
    expect(() => server.replace([tool('notes__search')])).toThrow(/was removed/);
    // The id is free again: the server may come back under its name.
    expect(registry.addSource('mcp:notes', 'mcp').replace([tool('notes__search')])).toEqual([]);
  });

  it('exposes named tools, mcp:<server>, * (built-in and MCP) and the user tools, all behind the switches', () => {
    const registry = new ToolRegistry([tool('terminal'), tool('todo')]);
    registry.addSource('user', 'user').replace([tool('weather')]);
    registry.addSource('mcp:notes', 'mcp').replace([tool('notes__search'), tool('notes__create')]);
    registry.addSource('mcp:files', 'mcp').replace([tool('files__read')]);
    const names = (list: string[], userTools = false) => registry.forNames(list, { userTools }).map(({ name }) => name);

    expect(names(['todo', 'mcp:notes', 'missing', 'mcp:missing'])).toEqual(['todo', 'notes__search', 'notes__create']);
    expect(names(['*'])).toEqual(['terminal', 'todo', 'notes__search', 'notes__create', 'files__read']);
    expect(names(['files__read'], true)).toEqual(['files__read', 'weather']);

    registry.setSwitch((name) => name !== 'notes__create' && name !== 'weather' && name !== 'terminal');
    expect(names(['*'], true)).toEqual(['terminal', 'todo', 'notes__search', 'files__read']);
    expect(registry.isEnabled('terminal')).toBe(true); // built-ins are chosen by profiles, never switched off
    expect(registry.isEnabled('notes__create')).toBe(false);
  });

  it('validates arguments against each tool’s schema', () => {
    const registry = new ToolRegistry();
    registry.addSource('mcp:math', 'mcp').replace([
      tool('math__add', { type: 'object', properties: { a: { type: 'number' } }, required: ['a'], additionalProperties: false }),
    ]);
    const { validate } = registry.get('math__add')!;
    expect(validate({ a: 1 })).toEqual({ ok: true });
    expect(validate({ b: 1 })).toMatchObject({ ok: false });
  });
});

it('compiles each built-in tool’s schema at its first call, so every one of them must compile', async () => {
  const db = await openDatabase(':memory:');
  const registry = createToolRegistry({ db, ...withJail(parseConfig({})), profiles: await ProfileRegistry.open('profiles'), runSubagent: async () => 'not run here' });
  const builtIns = registry.ofKind('builtin');
  expect(builtIns.length).toBeGreaterThan(15);
  for (const { tool } of builtIns) expect(() => compileArgumentsValidator(tool.parameters), tool.name).not.toThrow();
  // The first call compiles and checks: a wrong argument is refused with the field named.
  expect(registry.get('todo')!.validate({ action: 42 })).toMatchObject({ ok: false, message: expect.stringContaining('"action"') });
  await db.destroy();
});
