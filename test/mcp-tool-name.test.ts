import { describe, expect, it } from 'vitest';
import { isSanitised, maximumToolNameLength, mcpToolName } from '../src/tools/mcp/mcp-tool-name.ts';

describe('mcpToolName', () => {
  it('joins server and tool with two underscores and keeps names that are already safe as they are', () => {
    expect(mcpToolName('everything', 'echo')).toBe('everything__echo');
    expect(mcpToolName('fs', 'read_text_file')).toBe('fs__read_text_file');
    expect(mcpToolName('home-lab', 'get-sum')).toBe('home-lab__get-sum');
  });

  it('replaces every character outside [A-Za-z0-9_-], one underscore per character', () => {
    expect(mcpToolName('my.server', 'admin.tools.list')).toBe('my_server__admin_tools_list');
    expect(mcpToolName('notes', 'find notes/by tag')).toBe('notes__find_notes_by_tag');
    expect(mcpToolName('café', 'crème brûlée')).toBe('caf___cr_me_br_l_e');
    expect(mcpToolName('x', '😀')).toBe('x___');
    expect(isSanitised('my.server', 'list')).toBe(true);
    expect(isSanitised('fs', 'read_file')).toBe(false);
  });

  it('cuts names longer than 64 to 64, ending in six hex digits of a hash that is stable and tells long names apart', () => {
    const long = 'a'.repeat(70);
    const name = mcpToolName('server', long);
    expect(name).toHaveLength(maximumToolNameLength);
    expect(name).toMatch(/^server__a+_[0-9a-f]{6}$/);
    expect(mcpToolName('server', long)).toBe(name);
    // The same first 57 characters, different endings: the hashes keep them apart.
    expect(mcpToolName('server', `${long}b`)).not.toBe(name);
    expect(mcpToolName('server', `${long}b`).slice(0, 57)).toBe(name.slice(0, 57));
    // Exactly 64 is not cut.
    const sixtyFour = mcpToolName('s', 'b'.repeat(61));
    expect(sixtyFour).toBe(`s__${'b'.repeat(61)}`);
    expect(sixtyFour).toHaveLength(64);
  });

  it('hashes the original names, so two tools that sanitise alike get different hashed names', () => {
    // "files.read" and "files read" both sanitise to files_read; mcpTools() asks for the hashed form when they clash.
    const dotted = mcpToolName('notes', 'files.read', { hashed: true });
    const spaced = mcpToolName('notes', 'files read', { hashed: true });
    expect(mcpToolName('notes', 'files.read')).toBe(mcpToolName('notes', 'files read'));
    expect(dotted).toMatch(/^notes__files_read_[0-9a-f]{6}$/);
    expect(spaced).toMatch(/^notes__files_read_[0-9a-f]{6}$/);
    expect(dotted).not.toBe(spaced);
    // The server and tool are hashed apart: "a_" + "_b" and "a" + "__b" join alike but hash differently.
    expect(mcpToolName('a_', '_b', { hashed: true })).not.toBe(mcpToolName('a', '__b', { hashed: true }));
  });
});
