// Issue 31, attacks 1-3, in memory: every spelling of a path reaches the path policy's decision
// (src/tools/host-files/path-policy.ts). Each attack below succeeded with the filesystem tool
// before the policy: the "installation" here is the working folder the test owns (Hearth's real
// package root is only ever the target of a new, removed-afterwards file name), the home folder a
// temp one, and another session's folder sits beside the calling session's, as in SESSION_FILES_DIR.
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config.ts';
import { packageRoot } from '../../src/package-root.ts';
import { sessionFolder, stageUpload } from '../../src/store/session-files.ts';
import { createCodeExecTool } from '../../src/tools/builtin/code-exec.ts';
import { createFilesystemTool } from '../../src/tools/builtin/filesystem.ts';
import { createImageViewTool } from '../../src/tools/builtin/image-view.ts';
import { createSshExecTool } from '../../src/tools/builtin/ssh-exec.ts';
import { createTerminalTool } from '../../src/tools/builtin/terminal.ts';
import { createPathPolicy } from '../../src/tools/host-files/path-policy.ts';
import { ChangedWhileChecked, openPinned, readFlags } from '../../src/tools/host-files/pinned-files.ts';
import type { Tool, ToolContext } from '../../src/tools/tool.ts';
import { withJail } from '../support/jail.ts';
import { runTool, toolContext } from '../support/tool-context.ts';

const secret = `dotenv-secret-${randomBytes(4).toString('hex')}`;
const otherSessionText = 'the other person\'s contract: salary 91,000';
const mainScript = 'console.log("Hearth starts");\n';

let root: string;
let working: string;
let sessions: string;
let own: string;
let other: string;
let home: string;
let writable: string;
let outside: string;
let tool: Tool;
const originalHome = process.env.HOME;

function configFor(overrides: Record<string, string> = {}) {
  return parseConfig({
    DATA_DIR: path.join(working, 'data'),
    SESSION_FILES_DIR: sessions,
    PROFILES_DIR: path.join(working, 'profiles'),
    TOOLS_DIR: path.join(working, 'user-tools'),
    MANUALS_DIR: path.join(working, 'manuals'),
    FS_WRITABLE_PATHS: writable,
    ...overrides,
  });
}

function toolFor(overrides: Record<string, string> = {}): Tool {
  return createFilesystemTool({ config: configFor(overrides), workingFolder: working });
}

/** What the gate would do before the call runs: the precheck's refusal, else mustAsk's question. */
async function gate(args: Record<string, unknown>, overrides: Partial<ToolContext> = {}, using = tool) {
  const context = toolContext(overrides);
  const refused = await using.precheck?.(args, context);
  return { refused, ask: refused === undefined ? await using.mustAsk?.(args, context) : undefined };
}

beforeAll(async () => {
  root = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), 'hearth-path-policy-')));
  home = path.join(root, 'home');
  await fs.mkdir(home);
  process.env.HOME = home;
});

afterAll(async () => {
  process.env.HOME = originalHome;
  await fs.rm(root, { recursive: true, force: true });
});

beforeEach(async () => {
  working = path.join(root, `working-${randomBytes(3).toString('hex')}`);
  // The default layout: the session folders inside the folder Hearth runs from.
  sessions = path.join(working, 'session-files');
  own = path.join(sessions, 'session-1');
  other = path.join(sessions, 'session-2');
  writable = path.join(root, 'writable');
  outside = path.join(root, 'outside');
  for (const folder of [path.join(working, 'dist'), path.join(working, 'data'), own, other, writable, outside]) await fs.mkdir(folder, { recursive: true });
  await fs.writeFile(path.join(working, '.env'), `AUTH_TOKEN=${secret}\n`);
  await fs.writeFile(path.join(working, 'dist', 'main.js'), mainScript);
  await fs.writeFile(path.join(other, 'contract.txt'), otherSessionText);
  tool = toolFor();
});

afterEach(async () => {
  await fs.rm(working, { recursive: true, force: true });
});

const expectUnchanged = async () => {
  expect(await fs.readFile(path.join(working, 'dist', 'main.js'), 'utf8')).toBe(mainScript);
  expect(await fs.readFile(path.join(working, '.env'), 'utf8')).toBe(`AUTH_TOKEN=${secret}\n`);
};

describe('attack 1: code that runs inside Hearth at its next start', () => {
  it('refuses every spelling of a file in the working folder before anyone is asked, and at run time', async () => {
    const target = path.join(working, 'dist', 'main.js');
    await fs.symlink(path.join(working, 'dist'), path.join(own, 'build'));
    await fs.symlink(path.join(working, 'dist', 'next.js'), path.join(own, 'dangling.js'));
    const spellings = [
      target,
      '../../dist/main.js',
      `${own}/../../dist/./main.js`,
      'build/main.js',
      'dangling.js',
      `/proc/self/root${target}`,
      `/proc/${process.pid}/root${target}`,
      `/proc/thread-self/root${target}`,
    ];
    for (const spelling of spellings) {
      for (const action of ['append', 'write'] as const) {
        const args = { action, path: spelling, content: '\nprocess.env.AUTH_TOKEN;' };
        const { refused } = await gate(args);
        expect(refused, `${action} ${spelling}`).toMatch(/^Refused: .* is in Hearth's working folder/);
        const result = await runTool(tool, args);
        expect(result, `${action} ${spelling}`).toMatchObject({ success: false, output: expect.stringContaining('no tool may change it, whatever the rules or the person say') });
      }
    }
    await expectUnchanged();
    expect(existsSync(path.join(working, 'dist', 'next.js'))).toBe(false);
  });

  it('refuses Hearth\'s real installation folder (the package root), its .env and a new file in it', async () => {
    const planted = path.join(packageRoot, `planted-${randomBytes(4).toString('hex')}.js`);
    try {
      const written = await runTool(tool, { action: 'write', path: planted, content: 'process.exit(1)' });
      expect(written).toMatchObject({ success: false, output: expect.stringContaining('Hearth\'s installation folder') });
      expect(existsSync(planted)).toBe(false);
      expect((await gate({ action: 'append', path: path.join(packageRoot, 'package.json'), content: ' ' })).refused).toContain('installation folder');
      expect((await runTool(tool, { action: 'list', path: packageRoot })).output).toContain('Refused');
    } finally {
      await fs.rm(planted, { force: true });
    }
  });

  it('refuses /proc of Hearth and of the processes above it, in every spelling', async () => {
    for (const spelling of ['/proc/self/environ', '/proc/thread-self/environ', `/proc/${process.pid}/environ`, `/proc/${process.ppid}/environ`, `/proc/self/cwd/.env`, '/proc/self/task']) {
      const result = await runTool(tool, { action: spelling.endsWith('task') ? 'list' : 'read', path: spelling });
      expect(result, spelling).toMatchObject({ success: false, output: expect.stringMatching(/^Refused/) });
      expect(result.output).not.toContain('AUTH_TOKEN=');
    }
  });

  it('refuses a file with several names: a hard link to .env is not read, one to Hearth\'s code is not written', async () => {
    await fs.link(path.join(working, '.env'), path.join(own, 'innocent.txt'));
    await fs.link(path.join(working, 'dist', 'main.js'), path.join(own, 'notes.txt'));
    const read = await runTool(tool, { action: 'read', path: 'innocent.txt' });
    expect(read).toMatchObject({ success: false, output: expect.stringContaining('.env') });
    expect(read.output).not.toContain(secret);
    expect(await runTool(tool, { action: 'append', path: 'notes.txt', content: 'process.exit()' })).toMatchObject({ success: false, output: expect.stringContaining('2 names') });
    expect(await runTool(tool, { action: 'write', path: 'notes.txt', content: 'process.exit()' })).toMatchObject({ success: false });
    await expectUnchanged();
  });

  it.skipIf(process.getuid?.() !== 0)('refuses the working folder bound elsewhere (a bind mount has its device and inode)', async () => {
    const mountPoint = path.join(outside, 'mounted');
    await fs.mkdir(mountPoint);
    const mounted = spawnSync('mount', ['--bind', working, mountPoint]);
    if (mounted.status !== 0) return;
    try {
      const read = await runTool(tool, { action: 'read', path: path.join(mountPoint, '.env') });
      expect(read).toMatchObject({ success: false, output: expect.stringContaining('Refused') });
      expect(read.output).not.toContain(secret);
      expect(await runTool(tool, { action: 'append', path: path.join(mountPoint, 'dist', 'main.js'), content: 'x' })).toMatchObject({ success: false, output: expect.stringContaining('working folder') });
      await expectUnchanged();
    } finally {
      spawnSync('umount', [mountPoint]);
    }
  });

  it("never reads the document libraries' originals, even where DOCUMENTS_DIR is outside DATA_DIR", async () => {
    const documents = path.join(root, 'documents-elsewhere');
    await fs.mkdir(documents, { recursive: true });
    const original = path.join(documents, '0b0e6a0e-4d3c-4a8e-9d3a-2f6f2e0c1a11');
    await fs.writeFile(original, 'Payslip of another person of the household');
    const reader = toolFor({ DOCUMENTS_DIR: documents, FS_WRITABLE_PATHS: root });
    for (const action of ['read', 'list'] as const) {
      const target = action === 'read' ? original : documents;
      expect(await runTool(reader, { action, path: target }), action).toMatchObject({ success: false, output: expect.stringContaining('DOCUMENTS_DIR') });
    }
  });

  it('never reaches DATA_DIR, PROFILES_DIR or TOOLS_DIR even when FS_WRITABLE_PATHS names them', async () => {
    const loose = toolFor({ FS_WRITABLE_PATHS: working });
    for (const target of [path.join(working, 'data', 'x.json'), path.join(working, 'profiles', 'evil.md'), path.join(working, 'user-tools', 'evil.ts')]) {
      expect(await runTool(loose, { action: 'write', path: target, content: 'x' }), target).toMatchObject({ success: false, output: expect.stringMatching(/^Refused/) });
      expect(existsSync(target)).toBe(false);
    }
  });
});

describe('attack 2: persistence outside Hearth', () => {
  it('asks before every write into a place that runs code later, saying what the place does, even when FS_WRITABLE_PATHS covers it', async () => {
    const loose = toolFor({ FS_WRITABLE_PATHS: `${home},${own}` });
    const cases: [string, RegExp][] = [
      ['~/.ssh/authorized_keys', /log in/],
      ['~/.ssh/authorized_keys2', /log in/],
      [path.join(home, '.bashrc'), /at login/],
      ['~/.bashrc.d/evil.sh', /at login/],
      ['~/.profile', /at login/],
      ['~/.zshrc', /at login/],
      ['~/.config/autostart/evil.desktop', /desktop login/],
      ['~/.config/systemd/user/evil.service', /at boot/],
      ['~/.local/bin/ls', /types their name/],
      ['~/.npmrc', /npm/],
      ['~/.pypirc', /uploaded/],
      ['/root/.bashrc', /at login/],
      ['/home/someone/.ssh/authorized_keys', /log in/],
      ['/etc/cron.d/evil', /schedule/],
      ['/etc/profile.d/evil.sh', /at login/],
      ['/var/spool/cron/crontabs/root', /schedule/],
      ['project/.git/hooks/pre-commit', /every git commit/],
      ['project/.git/config', /every git commit/],
    ];
    for (const [target, does] of cases) {
      const { refused, ask } = await gate({ action: 'write', path: target, content: 'x' }, {}, loose);
      expect(refused, target).toBeUndefined();
      expect(ask, target).toMatch(does);
      expect(ask, target).toMatch(/^writes \//);
    }
    expect((await gate({ action: 'append', path: '~/.bashrc', content: 'x' }, {}, loose)).ask).toMatch(/^appends to .*\.bashrc: this file runs at login/);
  });

  it('asks before a write outside the session\'s folder and FS_WRITABLE_PATHS, saying where; not inside them', async () => {
    expect((await gate({ action: 'write', path: path.join(outside, 'notes.txt'), content: 'x' })).ask).toBe(`writes ${path.join(outside, 'notes.txt')}, outside the session's folder`);
    expect((await gate({ action: 'mkdir', path: path.join(outside, 'folder') })).ask).toContain('outside the session\'s folder');
    expect((await gate({ action: 'delete', path: path.join(outside, 'x') })).ask).toContain('outside the session\'s folder');
    expect((await gate({ action: 'write', path: '~/notes.txt', content: 'x' })).ask).toBe(`writes ${path.join(home, 'notes.txt')}, outside the session's folder`);
    // A link in the session's folder leading outside is asked about where it leads.
    await fs.symlink(outside, path.join(own, 'out'));
    expect((await gate({ action: 'write', path: 'out/planted.txt', content: 'x' })).ask).toContain(path.join(outside, 'planted.txt'));
    expect(await gate({ action: 'write', path: 'notes.txt', content: 'x' })).toEqual({ refused: undefined, ask: undefined });
    expect(await gate({ action: 'write', path: path.join(writable, 'report.txt'), content: 'x' })).toEqual({ refused: undefined, ask: undefined });
    expect(await gate({ action: 'read', path: path.join(outside, 'anything.txt') })).toEqual({ refused: undefined, ask: undefined });
    expect((await gate({ action: 'read', path: '~/.ssh/id_ed25519' })).ask).toContain('keys that open other machines');
  });

  it('ssh_exec does not read a key_path that is one of Hearth\'s files (here its real installation\'s)', async () => {
    const sshExec = createSshExecTool({ config: configFor() });
    try {
      for (const spelling of [path.join(packageRoot, '.env'), `/proc/self/root${packageRoot}/package.json`, '/proc/self/environ']) {
        const refused = await sshExec.precheck?.({ host: '127.0.0.1', username: 'x', command: 'true', key_path: spelling }, toolContext());
        expect(refused, spelling).toMatch(/^key_path: Refused/);
      }
      expect(await sshExec.precheck?.({ host: '127.0.0.1', username: 'x', command: 'true', key_path: path.join(outside, 'id_ed25519') }, toolContext())).toBeUndefined();
    } finally {
      await sshExec.dispose?.();
    }
  });

  it('the terminal does not start in one of Hearth\'s folders or another session\'s (here the real installation\'s)', async () => {
    const terminal = createTerminalTool(withJail(configFor()));
    for (const cwd of [packageRoot, '/proc/self/cwd', `/proc/self/root${packageRoot}`, '../session-2']) {
      const result = await runTool(terminal, { command: 'ls', cwd });
      expect(result, cwd).toMatchObject({ success: false, output: expect.stringMatching(/^cwd: (Refused|\.\.\/session-2 does not exist)/) });
    }
    expect(await runTool(terminal, { command: 'ls', cwd: '.' })).toMatchObject({ success: true });
  });

  it('image_view reads through the same policy', async () => {
    const imageView = createImageViewTool({ config: configFor(), workingFolder: working });
    await fs.link(path.join(working, '.env'), path.join(own, 'photo.png'));
    for (const spelling of ['photo.png', '../../.env', `/proc/self/root${working}/.env`, '/proc/self/environ']) {
      const context = toolContext();
      expect(await imageView.precheck?.({ path: spelling }, context), spelling).toMatch(/^Refused/);
      const result = await runTool(imageView, { path: spelling });
      expect(result.success, spelling).toBe(false);
      expect(result.output).not.toContain(secret);
    }
    const otherFile = await runTool(imageView, { path: path.join(other, 'contract.txt') });
    expect(otherFile).toMatchObject({ success: false });
    expect(otherFile.output).not.toContain('salary');
  });
});

describe('attack 3: another session\'s upload', () => {
  it('never lists SESSION_FILES_DIR, in any spelling', async () => {
    await fs.symlink(sessions, path.join(outside, 'all-sessions'));
    for (const spelling of [sessions, '..', `${own}/..`, path.join(outside, 'all-sessions'), `/proc/self/root${sessions}`]) {
      const result = await runTool(tool, { action: 'list', path: spelling });
      expect(result, spelling).toMatchObject({ success: false, output: expect.stringContaining('SESSION_FILES_DIR') });
      expect(result.output).not.toContain('session-2');
    }
  });

  it('answers for another session\'s folder and files exactly as for a missing path', async () => {
    const missingAnswer = (await runTool(tool, { action: 'read', path: '../session-9/nothing.txt' })).output;
    for (const spelling of ['../session-2/contract.txt', path.join(other, 'contract.txt'), `/proc/self/root${other}/contract.txt`]) {
      const read = await runTool(tool, { action: 'read', path: spelling });
      expect(read, spelling).toEqual({ success: false, output: `${spelling} does not exist. Use action "list" on its folder to see what is there.` });
      expect((await gate({ action: 'read', path: spelling })).refused).toBe(read.output);
    }
    expect(missingAnswer).toBe('../session-9/nothing.txt does not exist. Use action "list" on its folder to see what is there.');
    expect(await runTool(tool, { action: 'list', path: '../session-2' })).toEqual({ success: false, output: '../session-2 does not exist. Use action "list" on its folder to see what is there.' });
    expect(await runTool(tool, { action: 'list', path: '../session-9' })).toEqual({ success: false, output: '../session-9 does not exist. Use action "list" on its folder to see what is there.' });
    const written = await runTool(tool, { action: 'write', path: '../session-2/contract.txt', content: 'changed' });
    expect(written).toMatchObject({ success: false, output: expect.stringContaining('outside this session\'s own folder') });
    expect(await fs.readFile(path.join(other, 'contract.txt'), 'utf8')).toBe(otherSessionText);
  });

  it('keeps the session\'s own folder (inside the working folder) and a sub-agent\'s parent\'s fully usable', async () => {
    expect(await runTool(tool, { action: 'write', path: 'notes/summary.md', content: 'sum' })).toMatchObject({ success: true });
    expect(await runTool(tool, { action: 'append', path: 'notes/summary.md', content: 'mary' })).toMatchObject({ success: true, output: 'Appended 4 bytes to notes/summary.md (now 7 bytes).' });
    expect(await runTool(tool, { action: 'read', path: path.join(own, 'notes', 'summary.md') })).toMatchObject({ success: true, output: expect.stringContaining('summary') });
    expect(await runTool(tool, { action: 'list', path: '.' })).toMatchObject({ success: true, output: expect.stringContaining('notes/') });
    expect(await runTool(tool, { action: 'mkdir', path: 'a/b' })).toMatchObject({ success: true });
    expect(await runTool(tool, { action: 'delete', path: 'a/b' })).toMatchObject({ success: true });
    const subagent = { sessionId: 'subagent_1', parentSessionId: 'session-2', isSubagent: true };
    expect(await runTool(tool, { action: 'read', path: 'contract.txt' }, subagent)).toMatchObject({ success: true, output: expect.stringContaining('salary') });
    expect(await runTool(tool, { action: 'read', path: '../session-1/notes/summary.md' }, subagent)).toMatchObject({ success: false, output: expect.stringContaining('does not exist') });
  });
});

describe('the descriptor is the file decided on', () => {
  it('refuses a file swapped for a link after the decision', async () => {
    const policy = createPathPolicy({ config: configFor(), workingFolder: working });
    await fs.writeFile(path.join(own, 'notes.txt'), 'mine');
    const decided = await policy.decide('notes.txt', 'read', toolContext());
    if (!decided.ok) throw new Error(decided.message);
    await fs.rm(path.join(own, 'notes.txt'));
    await fs.symlink(path.join(working, '.env'), path.join(own, 'notes.txt'));
    await expect(openPinned(decided.real, readFlags, decided.leaf)).rejects.toBeInstanceOf(ChangedWhileChecked);
  });

  it('refuses a folder on the way swapped for a link after the decision', async () => {
    const policy = createPathPolicy({ config: configFor(), workingFolder: working });
    await fs.mkdir(path.join(own, 'sub'));
    await fs.writeFile(path.join(own, 'sub', '.env'), 'mine');
    const decided = await policy.decide('sub/.env', 'read', toolContext());
    if (!decided.ok) throw new Error(decided.message);
    await fs.rename(path.join(own, 'sub'), path.join(own, 'old'));
    await fs.symlink(working, path.join(own, 'sub'));
    await expect(openPinned(decided.real, readFlags)).rejects.toBeInstanceOf(ChangedWhileChecked);
    await expect(openPinned(decided.real, readFlags, decided.leaf)).rejects.toBeInstanceOf(ChangedWhileChecked);
  });

  it('refuses a file replaced by another one (same path, other inode) after the decision', async () => {
    const policy = createPathPolicy({ config: configFor(), workingFolder: working });
    await fs.writeFile(path.join(own, 'notes.txt'), 'mine');
    const decided = await policy.decide('notes.txt', 'read', toolContext());
    if (!decided.ok) throw new Error(decided.message);
    await fs.rm(path.join(own, 'notes.txt'));
    await fs.link(path.join(working, '.env'), path.join(own, 'notes.txt'));
    await expect(openPinned(decided.real, readFlags, decided.leaf)).rejects.toBeInstanceOf(ChangedWhileChecked);
  });
});

describe('code_exec\'s read grants', () => {
  it('leave out every FS_ALLOWED_PATHS folder inside one of Hearth\'s places', async () => {
    const policy = createPathPolicy({ config: configFor({ FS_ALLOWED_PATHS: `${root},${outside},${path.join(working, 'dist')},${packageRoot},${path.join(sessions, 'session-2')}` }), workingFolder: working });
    expect(await policy.readGrants()).toEqual([root, outside]);
  });

  it('keep a jailed program from reading Hearth\'s places through a grant that holds them, and the grant still usable', async () => {
    await fs.writeFile(path.join(outside, 'shared.txt'), 'shared notes');
    await fs.writeFile(path.join(working, 'data', 'hearth.db'), `SQLite format 3 ${secret}`);
    const codeExec = createCodeExecTool({ ...withJail(configFor({ FS_ALLOWED_PATHS: root })) });
    const files = [path.join(working, 'data', 'hearth.db'), path.join(other, 'contract.txt'), path.join(outside, 'shared.txt')];
    const code = `import fs from 'node:fs';\nfor (const file of ${JSON.stringify(files)}) { try { console.log('read', fs.readFileSync(file, 'utf8')); } catch (error) { console.log('refused', error.code); } }\nfs.writeFileSync('mine.txt', 'written');`;
    const result = await runTool(codeExec, { language: 'javascript', code });
    expect(result.output).toContain('read shared notes');
    expect(result.output).not.toContain(secret);
    expect(result.output).not.toContain('salary');
    expect(await fs.readFile(path.join(own, 'mine.txt'), 'utf8')).toBe('written');
  }, 30_000);
});

describe('uploads', () => {
  it('land in the session\'s own folder whatever the name says, and never through a link in its place', async () => {
    const folder = await sessionFolder(sessions, 'session-1');
    expect(folder).toBe(own);
    const names = ['../../.env', '..', '../session-2/contract.txt', '..\\..\\dist\\main.js', '/etc/cron.d/evil', `a\u0000/../../b`, '.bashrc'];
    for (const name of names) {
      const staged = await stageUpload(folder, Readable.from([Buffer.from('uploaded')]));
      const saved = await staged.commit(name);
      expect(path.dirname(saved.path), name).toBe(own);
      expect(saved.name.startsWith('.'), name).toBe(false);
    }
    await expectUnchanged();
    expect(await fs.readFile(path.join(other, 'contract.txt'), 'utf8')).toBe(otherSessionText);
    // A link planted where a session's folder would be is refused, not followed.
    await fs.symlink(path.join(working, 'dist'), path.join(sessions, 'session-3'));
    await expect(sessionFolder(sessions, 'session-3')).rejects.toThrow(/not a folder/);
    await expect(sessionFolder(sessions, '../session-2')).rejects.toThrow(/Invalid session id/);
  });
});
