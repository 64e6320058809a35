import { describe, expect, it } from 'vitest';
import matter from 'gray-matter';
import { withTool } from '../../src/profiles/profile-tool-switch.ts';

// PATCH /agents/profiles/:id {documents}: documents_search written into or out of a profile's tools, the rest kept.

const toolsOf = (text: string) => (matter(text).data as { tools?: string[] }).tools;

describe('withTool', () => {
  const block = '---\nid: cook\nname: Cook\n# the kitchen tools\ntools:\n  - scratchpad\n  - "todo"\ntemperature: 0.5\n---\nYou cook.\n';

  it('adds the tool at the end of a block list, and takes it out again, keeping every other line', () => {
    const on = withTool(block, 'documents_search', true)!;
    expect(toolsOf(on)).toEqual(['scratchpad', 'todo', 'documents_search']);
    expect(on).toContain('# the kitchen tools\n');
    expect(on.endsWith('temperature: 0.5\n---\nYou cook.\n')).toBe(true);
    expect(withTool(on, 'documents_search', true)).toBe(on);
    expect(withTool(on, 'documents_search', false)).toBe(block);
  });

  it('handles a flow list, an empty one, a list of one taken out and a profile without tools', () => {
    expect(toolsOf(withTool('---\nid: a\nname: A\ntools: [todo, scratchpad]\n---\n', 'documents_search', true)!)).toEqual(['todo', 'scratchpad', 'documents_search']);
    expect(toolsOf(withTool('---\nid: a\nname: A\ntools: []\n---\n', 'documents_search', true)!)).toEqual(['documents_search']);
    expect(toolsOf(withTool('---\nid: a\nname: A\ntools:\n  - documents_search\n---\n', 'documents_search', false)!)).toEqual([]);
    expect(toolsOf(withTool('---\nid: a\nname: A\n---\nBody\n', 'documents_search', true)!)).toEqual(['documents_search']);
    expect(withTool('---\nid: a\nname: A\n---\nBody\n', 'documents_search', false)).toBe('---\nid: a\nname: A\n---\nBody\n');
  });

  it('cannot take one tool out of "*" (every tool), which already has it', () => {
    expect(withTool('---\nid: a\nname: A\ntools:\n  - "*"\n---\n', 'documents_search', false)).toBeUndefined();
    expect(withTool("---\nid: a\nname: A\ntools: ['*']\n---\n", 'documents_search', false)).toBeUndefined();
    const every = '---\nid: a\nname: A\ntools:\n  - "*"\n---\n';
    expect(withTool(every, 'documents_search', true)).toBe(every);
  });
});
