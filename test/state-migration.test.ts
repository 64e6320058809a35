// The one-time move of an older install's state out of its checkout (src/state-migration.ts),
// on a real git checkout in a temp folder laid out as Hearth's was, with real files.
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parseConfig } from '../src/config.ts';
import { logStateMigration, moveStateOutOfCheckout } from '../src/state-migration.ts';

const run = promisify(execFile);

let root: string;
let checkout: string;
let dataDir: string;

async function put(file: string, text: string): Promise<void> {
  await mkdir(path.dirname(file), { recursive: true });
  await writeFile(file, text);
}

const git = (...args: string[]) => run('git', ['-C', checkout, '-c', 'user.name=Test', '-c', 'user.email=test@example.com', ...args]);

beforeEach(async () => {
  root = await mkdtemp(path.join(tmpdir(), 'hearth-state-migration-'));
  checkout = path.join(root, 'hearth');
  dataDir = path.join(root, 'share', 'hearth');
  // What the checkout ships, as committed.
  await put(path.join(checkout, '.gitignore'), 'data/\nsession-files/*\n!session-files/.gitkeep\nmcp.json\nssh_hosts.json\nuser-tools/.build/\nuser-tools/.history/\nuser-tools/enabled.json\n');
  await put(path.join(checkout, 'user-tools', '_template.ts'), '// template\n');
  await put(path.join(checkout, 'user-tools', 'get_current_datetime.ts'), '// shipped\n');
  await put(path.join(checkout, 'profiles', 'secretary.md'), 'shipped secretary\n');
  await put(path.join(checkout, 'profiles', 'server_admin.md'), 'shipped admin\n');
  await put(path.join(checkout, 'session-files', '.gitkeep'), '');
  await run('git', ['init', '-q', checkout]);
  await git('add', '.');
  await git('commit', '-q', '-m', 'shipped');
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

/** What a year of use left in the checkout. */
async function useTheCheckout(): Promise<void> {
  await put(path.join(checkout, 'data', 'hearth.db'), 'database');
  await put(path.join(checkout, 'data', 'hearth.db-wal'), 'journal');
  await put(path.join(checkout, 'data', 'images', 's1', 'a.png'), 'image');
  await put(path.join(checkout, 'data', 'jail', 'tmp', 'scratch'), 'scratch');
  await put(path.join(checkout, 'session-files', 's1', 'upload.txt'), 'upload');
  await put(path.join(checkout, 'mcp.json'), '{"servers":{}}');
  await put(path.join(checkout, 'ssh_hosts.json'), '{}');
  await put(path.join(checkout, 'user-tools', 'word_stats.ts'), '// the agent wrote it\n');
  await put(path.join(checkout, 'user-tools', '_text.ts'), '// its helper\n');
  await put(path.join(checkout, 'user-tools', 'enabled.json'), '{"disabled":["get_current_datetime"]}\n');
  await put(path.join(checkout, 'user-tools', 'permissions.json'), '{}\n');
  await put(path.join(checkout, 'user-tools', '.history', 'word_stats.2026-01-01.ts'), '// before\n');
  await put(path.join(checkout, 'user-tools', '.build', 'generation-1', 'word_stats.mjs'), '// a cache\n');
  await put(path.join(checkout, 'profiles', 'server_admin.md'), 'my admin\n');
  await put(path.join(checkout, 'profiles', 'gardener.md'), 'my own profile\n');
}

async function filesUnder(folder: string): Promise<string[]> {
  const entries = await readdir(folder, { recursive: true, withFileTypes: true }).catch(() => []);
  return entries.filter((entry) => entry.isFile()).map((entry) => path.relative(folder, path.join(entry.parentPath, entry.name))).sort();
}

describe('moving the state out of the checkout', () => {
  it('moves everything of the person\'s to DATA_DIR, says each move, and leaves git status clean', async () => {
    await useTheCheckout();
    const config = parseConfig({ DATA_DIR: dataDir });

    const report = await moveStateOutOfCheckout(config, checkout);

    expect(await filesUnder(dataDir)).toEqual([
      'hearth.db',
      'hearth.db-wal',
      'images/s1/a.png',
      'mcp.json',
      'profiles/gardener.md',
      'profiles/server_admin.md',
      'session-files/s1/upload.txt',
      'ssh_hosts.json',
      'user-tools/.history/word_stats.2026-01-01.ts',
      'user-tools/_text.ts',
      'user-tools/enabled.json',
      'user-tools/permissions.json',
      'user-tools/word_stats.ts',
    ]);
    expect(await readFile(path.join(dataDir, 'profiles', 'server_admin.md'), 'utf8')).toBe('my admin\n');
    expect(await readFile(path.join(checkout, 'profiles', 'server_admin.md'), 'utf8')).toBe('shipped admin\n');
    expect(report.moved).toHaveLength(13);
    expect(report.moved).toContain(`${path.join(checkout, 'mcp.json')} → ${path.join(dataDir, 'mcp.json')}`);
    expect(report.moved).toContain(`${path.join(checkout, 'profiles', 'server_admin.md')} (your edit) → ${path.join(dataDir, 'profiles', 'server_admin.md')}; the shipped version is back in the checkout`);
    expect(report.kept).toEqual([]);
    expect(report.warnings).toEqual([]);
    // Only caches and scratch stay, and git ignores them.
    expect((await git('status', '--porcelain')).stdout).toBe('');
    expect(await filesUnder(path.join(checkout, 'data'))).toEqual(['jail/tmp/scratch']);

    // Once: a second start finds nothing to move.
    expect(await moveStateOutOfCheckout(config, checkout)).toEqual({ moved: [], kept: [], warnings: [] });
  });

  it('never overwrites what DATA_DIR has, and says what it left in the checkout', async () => {
    await useTheCheckout();
    await put(path.join(dataDir, 'hearth.db'), 'newer database');
    await put(path.join(dataDir, 'mcp.json'), '{"servers":{"newer":{}}}');
    await put(path.join(dataDir, 'profiles', 'server_admin.md'), 'newer admin\n');

    const report = await moveStateOutOfCheckout(parseConfig({ DATA_DIR: dataDir }), checkout);

    expect(await readFile(path.join(dataDir, 'hearth.db'), 'utf8')).toBe('newer database');
    expect(await readFile(path.join(dataDir, 'mcp.json'), 'utf8')).toBe('{"servers":{"newer":{}}}');
    expect(await readFile(path.join(dataDir, 'profiles', 'server_admin.md'), 'utf8')).toBe('newer admin\n');
    // The old database and its journal stay together beside each other, untouched.
    expect(await filesUnder(dataDir)).not.toContain('hearth.db-wal');
    expect(await readFile(path.join(checkout, 'data', 'hearth.db-wal'), 'utf8')).toBe('journal');
    expect(await readFile(path.join(checkout, 'mcp.json'), 'utf8')).toBe('{"servers":{}}');
    expect(await readFile(path.join(checkout, 'profiles', 'server_admin.md'), 'utf8')).toBe('my admin\n');
    expect(report.kept).toEqual([
      `${path.join(checkout, 'data', 'hearth.db')} (${path.join(dataDir, 'hearth.db')} is there already)`,
      `${path.join(checkout, 'mcp.json')} (${path.join(dataDir, 'mcp.json')} is there already)`,
      `${path.join(checkout, 'profiles', 'server_admin.md')}, edited (${path.join(dataDir, 'profiles', 'server_admin.md')} is there already)`,
    ]);
    expect(report.moved).toContain(`${path.join(checkout, 'user-tools', 'word_stats.ts')} → ${path.join(dataDir, 'user-tools', 'word_stats.ts')}`);

    const logged: string[] = [];
    logStateMigration(report, { info: (_fields: object, line: string) => logged.push(`info ${line}`), warn: (fields: object | string, line?: string) => logged.push(`warn ${line ?? fields}`) } as never);
    expect(logged[0]).toMatch(/^info moved 9 piece\(s\) of your state out of Hearth's checkout, once: /);
    expect(logged[1]).toContain(`warn left in Hearth's checkout`);
    expect(logged[1]).toContain(path.join(checkout, 'mcp.json'));
  });

  it('moves nothing onto itself, and warns of a setting that still points into the checkout', async () => {
    await useTheCheckout();
    const config = parseConfig({ DATA_DIR: dataDir, TOOLS_DIR: path.join(checkout, 'user-tools'), MCP_CONFIG_FILE: path.join(checkout, 'mcp.json') });

    const report = await moveStateOutOfCheckout(config, checkout);

    expect(await readFile(path.join(checkout, 'user-tools', 'word_stats.ts'), 'utf8')).toBe('// the agent wrote it\n');
    expect(await readFile(path.join(checkout, 'mcp.json'), 'utf8')).toBe('{"servers":{}}');
    expect(report.moved.some((line) => line.includes('word_stats') || line.includes('mcp.json'))).toBe(false);
    expect(report.warnings).toEqual([
      expect.stringMatching(/^TOOLS_DIR=.*\/hearth\/user-tools is inside Hearth's installation folder .*: what Hearth writes there meets git\. Remove TOOLS_DIR from \.env/),
      expect.stringMatching(/^MCP_CONFIG_FILE=.*\/hearth\/mcp\.json is inside Hearth's installation folder/),
    ]);
  });

  it('with moving off (DATA_DIR chosen by hand) moves nothing and still warns', async () => {
    await useTheCheckout();
    const config = parseConfig({ DATA_DIR: dataDir, MCP_CONFIG_FILE: path.join(checkout, 'mcp.json') });

    const report = await moveStateOutOfCheckout(config, checkout, { move: false });

    expect(report).toEqual({ moved: [], kept: [], warnings: [expect.stringMatching(/^MCP_CONFIG_FILE=.* is inside Hearth's installation folder/)] });
    expect(await filesUnder(dataDir)).toEqual([]);
    expect((await git('status', '--porcelain')).stdout).not.toBe('');
  });

  it('without git moves only what is wholly state, and says what it could not tell apart', async () => {
    await useTheCheckout();
    await rm(path.join(checkout, '.git'), { recursive: true, force: true });

    const report = await moveStateOutOfCheckout(parseConfig({ DATA_DIR: dataDir }), checkout);

    expect(await filesUnder(dataDir)).toEqual(['hearth.db', 'hearth.db-wal', 'images/s1/a.png', 'mcp.json', 'session-files/s1/upload.txt', 'ssh_hosts.json']);
    expect(report.warnings).toEqual([expect.stringContaining('is not a git checkout, so Hearth cannot tell the tools and profiles it ships from yours there')]);
  });
});
