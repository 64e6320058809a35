import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parseConfig } from '../src/config.ts';
import { createFilesystemTool } from '../src/tools/builtin/filesystem.ts';
import { isInside, resolveAllowedPath } from '../src/tools/host-files/path-access.ts';
import type { Tool, ToolContext } from '../src/tools/tool.ts';
import { runTool, toolContext } from './support/tool-context.ts';

let directory: string;
let sessionFiles: string;
let workFolder: string;
let data: string;
let outside: string;
let tool: Tool;

function toolFor(allowedPaths: string): Tool {
  return createFilesystemTool({ config: parseConfig({ SESSION_FILES_DIR: sessionFiles, FS_ALLOWED_PATHS: allowedPaths }) });
}

function run(args: Record<string, unknown>, overrides?: Partial<ToolContext>) {
  return runTool(tool, args, overrides);
}

beforeEach(async () => {
  directory = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), 'hearth-fs-')));
  sessionFiles = path.join(directory, 'sessions');
  workFolder = path.join(sessionFiles, 'session-1');
  data = path.join(directory, 'data');
  outside = path.join(directory, 'outside');
  await Promise.all([fs.mkdir(workFolder, { recursive: true }), fs.mkdir(data), fs.mkdir(outside)]);
  await fs.writeFile(path.join(outside, 'secret.txt'), 'secret');
  tool = toolFor(data);
});

afterEach(async () => {
  await fs.rm(directory, { recursive: true, force: true });
});

describe('filesystem tool actions', () => {
  it('keeps its schema small and closed', () => {
    const size = JSON.stringify({ name: tool.name, description: tool.description, parameters: tool.parameters }).length;
    expect(size).toBeLessThan(700);
    expect(tool.parameters.additionalProperties).toBe(false);
  });

  it('writes relative paths into the work folder, creating parents, and replaces', async () => {
    const first = await run({ action: 'write', path: 'notes/plan.md', content: 'hello' });
    expect(first).toEqual({ output: 'Wrote 5 bytes to notes/plan.md (new file).', success: true });
    expect(await fs.readFile(path.join(workFolder, 'notes/plan.md'), 'utf8')).toBe('hello');
    const second = await run({ action: 'write', path: 'notes/plan.md', content: 'bye' });
    expect(second.output).toBe('Wrote 3 bytes to notes/plan.md (replaced 5 bytes).');
    expect(await fs.readFile(path.join(workFolder, 'notes/plan.md'), 'utf8')).toBe('bye');
  });

  it('appends, creating the file when missing', async () => {
    expect((await run({ action: 'append', path: 'log.txt', content: 'one\n' })).output).toBe('Appended 4 bytes to log.txt (now 4 bytes).');
    expect((await run({ action: 'append', path: 'log.txt', content: 'two\n' })).output).toBe('Appended 4 bytes to log.txt (now 8 bytes).');
    expect(await fs.readFile(path.join(workFolder, 'log.txt'), 'utf8')).toBe('one\ntwo\n');
  });

  it('asks for content when write or append lacks it', async () => {
    expect(await run({ action: 'write', path: 'a.txt' })).toMatchObject({ success: false, output: expect.stringContaining('Send content') });
    expect(await run({ action: 'append', path: 'a.txt' })).toMatchObject({ success: false });
  });

  it('reads a text file and says what it read', async () => {
    await fs.writeFile(path.join(workFolder, 'plan.md'), 'step 1\nstep 2');
    expect(await run({ action: 'read', path: 'plan.md' })).toEqual({ output: 'Contents of plan.md (13 bytes):\nstep 1\nstep 2', success: true });
    await fs.writeFile(path.join(workFolder, 'empty.txt'), '');
    expect((await run({ action: 'read', path: 'empty.txt' })).output).toBe('empty.txt is empty (0 bytes).');
  });

  it('truncates large files with a note', async () => {
    await fs.writeFile(path.join(workFolder, 'big.txt'), 'é'.repeat(150_000));
    const result = await run({ action: 'read', path: 'big.txt' });
    expect(result.success).toBe(true);
    expect(result.output).toContain('first 100,000 characters of 300,000 bytes');
    expect(result.output).toContain('[truncated');
    expect(result.output.match(/é/g)?.length).toBe(100_000);
  });

  it('describes binary files instead of printing them', async () => {
    await fs.writeFile(path.join(workFolder, 'photo.jpg'), Buffer.from([0xff, 0xd8, 0x00, 0x10, 0x4a, 0x46]));
    const result = await run({ action: 'read', path: 'photo.jpg' });
    expect(result.success).toBe(true);
    expect(result.output).toContain('photo.jpg is a binary file (6 bytes)');
    expect(result.output).not.toContain('\u0000');
  });

  it('lists entries sorted with type and size, and caps long listings', async () => {
    await fs.mkdir(path.join(workFolder, 'b-folder'));
    await fs.writeFile(path.join(workFolder, 'c.txt'), '12345');
    await fs.symlink(path.join(workFolder, 'c.txt'), path.join(workFolder, 'a-link'));
    expect((await run({ action: 'list', path: '.' })).output).toBe(
      `Contents of . (3 entries):\nlink  a-link -> ${path.join(workFolder, 'c.txt')}\ndir   b-folder/\nfile  c.txt  5 bytes`,
    );
    await Promise.all(Array.from({ length: 205 }, (_, index) => fs.writeFile(path.join(workFolder, 'b-folder', `f${String(index).padStart(3, '0')}`), '')));
    const long = await run({ action: 'list', path: 'b-folder' });
    expect(long.output).toContain('Contents of b-folder (205 entries):');
    expect(long.output).toContain('f199');
    expect(long.output).not.toContain('f200');
    expect(long.output).toContain('5 more not shown');
    await fs.mkdir(path.join(workFolder, 'empty'));
    expect((await run({ action: 'list', path: 'empty' })).output).toBe('empty is an empty folder.');
  });

  it('deletes files and empty folders but refuses non-empty folders and the work folder', async () => {
    await fs.mkdir(path.join(workFolder, 'full/inner'), { recursive: true });
    await fs.writeFile(path.join(workFolder, 'file.txt'), 'abc');
    expect((await run({ action: 'delete', path: 'file.txt' })).output).toBe('Deleted file file.txt (3 bytes).');
    const refused = await run({ action: 'delete', path: 'full' });
    expect(refused.success).toBe(false);
    expect(refused.output).toContain('only empty folders can be deleted');
    expect((await fs.stat(path.join(workFolder, 'full/inner'))).isDirectory()).toBe(true);
    expect((await run({ action: 'delete', path: 'full/inner' })).output).toBe('Deleted empty folder full/inner.');
    expect(await run({ action: 'delete', path: '.' })).toMatchObject({ success: false });
    expect((await fs.stat(workFolder)).isDirectory()).toBe(true);
  });

  it('deletes a link itself, not what it points to', async () => {
    await fs.writeFile(path.join(workFolder, 'target.txt'), 'keep');
    await fs.symlink(path.join(workFolder, 'target.txt'), path.join(workFolder, 'shortcut'));
    expect((await run({ action: 'delete', path: 'shortcut' })).output).toContain('Deleted the link shortcut');
    expect(await fs.readFile(path.join(workFolder, 'target.txt'), 'utf8')).toBe('keep');
  });

  it('creates folders recursively and says when one already exists', async () => {
    expect((await run({ action: 'mkdir', path: 'a/b/c' })).output).toBe('Created folder a/b/c.');
    expect((await fs.stat(path.join(workFolder, 'a/b/c'))).isDirectory()).toBe(true);
    expect((await run({ action: 'mkdir', path: 'a/b' })).output).toBe('Folder a/b already exists; nothing to do.');
    await fs.writeFile(path.join(workFolder, 'plain'), '');
    expect(await run({ action: 'mkdir', path: 'plain' })).toMatchObject({ success: false, output: expect.stringContaining('plain already exists as a file') });
  });

  it('turns filesystem errors into failures naming the path', async () => {
    expect(await run({ action: 'read', path: 'missing.txt' })).toEqual({
      success: false,
      output: 'missing.txt does not exist. Use action "list" on its folder to see what is there.',
    });
    expect(await run({ action: 'delete', path: 'missing.txt' })).toMatchObject({ success: false, output: expect.stringContaining('missing.txt does not exist') });
    await fs.mkdir(path.join(workFolder, 'folder'));
    expect(await run({ action: 'read', path: 'folder' })).toMatchObject({ success: false, output: expect.stringContaining('folder is a folder') });
    expect(await run({ action: 'write', path: 'folder', content: 'x' })).toMatchObject({ success: false });
    expect(await run({ action: 'list', path: 'missing' })).toMatchObject({ success: false });
    await fs.writeFile(path.join(workFolder, 'file'), 'x');
    expect(await run({ action: 'write', path: 'file/child.txt', content: 'x' })).toMatchObject({ success: false, output: expect.stringContaining('file/child.txt') });
  });

  it.skipIf(process.getuid?.() === 0)('reports permission errors', async () => {
    await fs.writeFile(path.join(workFolder, 'locked.txt'), 'x', { mode: 0o000 });
    expect(await run({ action: 'read', path: 'locked.txt' })).toMatchObject({ success: false, output: expect.stringContaining('Permission denied') });
  });

  it('stops when the call is aborted', async () => {
    await fs.writeFile(path.join(workFolder, 'plan.md'), 'x');
    const controller = new AbortController();
    controller.abort();
    await expect(tool.execute({ action: 'read', path: 'plan.md' }, toolContext({ signal: controller.signal }))).rejects.toThrow();
  });

  it('lets a sub-agent share the parent session folder', async () => {
    const subagent = { sessionId: 'subagent_abc', parentSessionId: 'session-1', isSubagent: true };
    await run({ action: 'write', path: 'shared.txt', content: 'from sub-agent' }, subagent);
    expect(await fs.readFile(path.join(workFolder, 'shared.txt'), 'utf8')).toBe('from sub-agent');
    expect((await run({ action: 'read', path: 'shared.txt' })).output).toContain('from sub-agent');
  });
});

describe('filesystem tool path access', () => {
  it('allows absolute paths under an allowed root and refuses others', async () => {
    const inside = path.join(data, 'report.txt');
    expect((await run({ action: 'write', path: inside, content: 'ok' })).success).toBe(true);
    expect(await fs.readFile(inside, 'utf8')).toBe('ok');
    const refused = await run({ action: 'read', path: path.join(outside, 'secret.txt') });
    expect(refused.success).toBe(false);
    expect(refused.output).toContain('refused');
    expect(refused.output).not.toContain('secret\n');
  });

  it('does not mistake a sibling with the same prefix for the root', async () => {
    const sibling = path.join(directory, 'data2');
    await fs.mkdir(sibling);
    expect(await run({ action: 'write', path: path.join(sibling, 'x.txt'), content: 'x' })).toMatchObject({ success: false });
    await expect(fs.stat(path.join(sibling, 'x.txt'))).rejects.toThrow();
    expect(isInside('/x/data', '/x/data2')).toBe(false);
    expect(isInside('/x/data', '/x/data/..thing')).toBe(true);
  });

  it('allows any absolute path when FS_ALLOWED_PATHS is *', async () => {
    const anywhere = toolFor('*');
    expect(await runTool(anywhere, { action: 'read', path: path.join(outside, 'secret.txt') })).toMatchObject({ success: true, output: expect.stringContaining('secret') });
  });

  it('always allows the work folder, even when no root covers it', async () => {
    const narrow = toolFor(path.join(directory, 'nowhere'));
    expect((await runTool(narrow, { action: 'write', path: path.join(workFolder, 'abs.txt'), content: 'x' })).success).toBe(true);
  });

  it('refuses .. that climbs out of the allowed folders', async () => {
    expect(await run({ action: 'read', path: '../../outside/secret.txt' })).toMatchObject({ success: false, output: expect.stringContaining('refused') });
    expect(await run({ action: 'write', path: '../session-2/x.txt', content: 'x' })).toMatchObject({ success: false });
    expect(await run({ action: 'read', path: `${data}/../outside/secret.txt` })).toMatchObject({ success: false });
    expect((await run({ action: 'write', path: 'a/../b.txt', content: 'x' })).success).toBe(true);
    expect(await fs.readFile(path.join(workFolder, 'b.txt'), 'utf8')).toBe('x');
  });

  it('refuses a symlink in the work folder that points outside, and follows one that stays inside', async () => {
    await fs.symlink(outside, path.join(workFolder, 'escape'));
    expect(await run({ action: 'read', path: 'escape/secret.txt' })).toMatchObject({ success: false, output: expect.stringContaining('refused') });
    expect(await run({ action: 'write', path: 'escape/new.txt', content: 'x' })).toMatchObject({ success: false });
    await expect(fs.stat(path.join(outside, 'new.txt'))).rejects.toThrow();

    await fs.writeFile(path.join(data, 'shared.txt'), 'allowed');
    await fs.symlink(path.join(data, 'shared.txt'), path.join(workFolder, 'inside-link'));
    expect(await run({ action: 'read', path: 'inside-link' })).toMatchObject({ success: true, output: expect.stringContaining('allowed') });
  });

  it('refuses writing through a dangling link that points outside', async () => {
    await fs.symlink(path.join(outside, 'planted.txt'), path.join(workFolder, 'dangling'));
    expect(await run({ action: 'write', path: 'dangling', content: 'x' })).toMatchObject({ success: false });
    await expect(fs.stat(path.join(outside, 'planted.txt'))).rejects.toThrow();
  });

  it('resolves paths for other tools through resolveAllowedPath', async () => {
    expect(await resolveAllowedPath('notes/a.md', { workFolder, allowedRoots: [data] })).toEqual({
      ok: true,
      path: path.join(workFolder, 'notes/a.md'),
      root: workFolder,
    });
    expect(await resolveAllowedPath('/etc/passwd', { workFolder, allowedRoots: [data] })).toMatchObject({ ok: false });
    expect(await resolveAllowedPath('/etc/passwd', { workFolder, allowedRoots: 'anywhere' })).toMatchObject({ ok: true, path: '/etc/passwd' });
  });
});
