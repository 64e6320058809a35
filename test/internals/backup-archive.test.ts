import { createHash } from 'node:crypto';
import { existsSync, lstatSync, readdirSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, truncate, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import { create as createTar, extract } from 'tar';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createBackup } from '../../src/operations/backup.ts';
import { acquireInstanceLock } from '../../src/operations/instance-lock.ts';
import { restoreBackup } from '../../src/operations/restore.ts';
import { openDatabase } from '../../src/store/database.ts';
import { giveFolderTo, unprivilegedUser } from '../support/unprivileged-user.ts';

// What goes into a backup and what a restore accepts: real SQLite files and real archives in a
// temp folder. Every refusal leaves the DATA_DIR it was aimed at exactly as it was.

let folder: string;
let dataDir: string;
let other: string;
beforeEach(async () => {
  folder = await mkdtemp(path.join(tmpdir(), 'hearth-backup-archive-'));
  dataDir = path.join(folder, 'data');
  other = path.join(folder, 'other');
});
afterEach(async () => {
  await rm(folder, { recursive: true, force: true });
});

const settingsOf = (dir: string) => ({ DATA_DIR: dir, DB_PATH: path.join(dir, 'hearth.db') });

const stateFiles: Record<string, string> = {
  'mcp.json': '{"servers":{}}',
  'persona.md': 'You are calm.',
  'profiles/secretary.md': '---\nid: secretary\n---\nMine.',
  'user-tools/enabled.json': '{"weather":false}',
  'user-tools/weather.ts': 'export default {};',
  'user-tools/.history/weather.ts.1': 'export default 1;',
  'session-files/s1/notes.txt': 'uploaded',
  'images/1.png': 'not really a picture',
};
const notState: Record<string, string> = {
  'backups/hearth-before-migrating-x.tar.gz': 'old',
  'npm-cache/_cacache/index': 'cache',
  'jail/scratch': 'scratch',
  'user-tools/.build/weather.js': 'built',
  // What an earlier backup written into DATA_DIR left half done.
  '.hearth-backup-AbCdEf/hearth.db': 'snapshot',
  'hearth-backup-x.tar.gz.partial': 'half an archive',
};

/** A DATA_DIR in use: a database with a row in it, state files, and what a backup leaves out. */
async function dataDirInUse(dir: string, marker: string): Promise<void> {
  const db = await openDatabase(path.join(dir, 'hearth.db'));
  await db.insertInto('user_tool_kv').values({ tool: 'notes', key: 'marker', value: JSON.stringify(marker), updated_at: '2026-11-28T00:00:00.000Z' }).execute();
  await db.destroy();
  for (const [name, text] of Object.entries({ ...stateFiles, ...notState })) {
    await mkdir(path.dirname(path.join(dir, name)), { recursive: true });
    await writeFile(path.join(dir, name), `${text} (${marker})`);
  }
}

/** Every file under `dir` with its SHA-256: what "nothing changed" is checked against. */
function fingerprint(dir: string): Record<string, string> {
  const found: Record<string, string> = {};
  if (!existsSync(dir)) return found;
  for (const entry of readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const file = path.join(entry.parentPath, entry.name);
    found[path.relative(dir, file)] = createHash('sha256').update(readFileSync(file)).digest('hex');
  }
  return found;
}

function markerIn(databaseFile: string): string {
  const database = new SqliteDatabase(databaseFile, { readonly: true });
  try {
    return JSON.parse(database.prepare("SELECT value FROM user_tool_kv WHERE key = 'marker'").pluck().get() as string);
  } finally {
    database.close();
  }
}

async function backupOf(dir: string, name = 'backup.tar.gz'): Promise<string> {
  const result = await createBackup(settingsOf(dir), path.join(folder, name));
  if (!result.ok) throw new Error(result.message);
  return result.file;
}

describe('hearth backup', () => {
  it("holds the database and DATA_DIR's state files, each measured in the manifest, and none of the caches, scratch or backups", async () => {
    await dataDirInUse(dataDir, 'one');
    // A connection in the middle of a write: the online backup copies what is committed.
    const writer = new SqliteDatabase(path.join(dataDir, 'hearth.db'));
    writer.exec("BEGIN; UPDATE user_tool_kv SET value = '\"uncommitted\"'");
    const result = await createBackup(settingsOf(dataDir), path.join(folder, 'backup.tar.gz'));
    writer.exec('ROLLBACK');
    writer.close();
    if (!result.ok) throw new Error(result.message);

    const unpacked = path.join(folder, 'unpacked');
    await mkdir(unpacked);
    await extract({ file: result.file, cwd: unpacked });
    expect(Object.keys(fingerprint(path.join(unpacked, 'data'))).sort()).toEqual(Object.keys(stateFiles).sort());
    expect(markerIn(path.join(unpacked, 'hearth.db'))).toBe('one');
    const manifest = JSON.parse(await readFile(path.join(unpacked, 'manifest.json'), 'utf8'));
    expect(manifest).toMatchObject({ format: 'hearth-backup', format_version: 1, hearth_version: '0.1.0' });
    const fingerprints = fingerprint(path.join(unpacked, 'data'));
    expect(Object.fromEntries(manifest.files.map((file: any) => [file.path, file.sha256]))).toEqual(fingerprints);
    expect(manifest.files.find((file: any) => file.path === 'mcp.json').size).toBe(Buffer.byteLength(`${stateFiles['mcp.json']} (one)`));
    expect(result.outside).toEqual([]);
  });

  it('says so when there is no database to back up', async () => {
    const result = await createBackup(settingsOf(path.join(folder, 'nothing')), path.join(folder, 'backup.tar.gz'));
    expect(result).toEqual({ ok: false, message: `There is no database at ${path.join(folder, 'nothing', 'hearth.db')}: nothing to back up (is DATA_DIR right?).` });
    expect(existsSync(path.join(folder, 'backup.tar.gz'))).toBe(false);
  });
});

describe('hearth restore', () => {
  it("replaces another DATA_DIR's state and database with the archive's, keeping what was there in backups/replaced-*, and its caches where they are", async () => {
    await dataDirInUse(dataDir, 'one');
    const archive = await backupOf(dataDir);
    await dataDirInUse(other, 'two');
    await writeFile(path.join(other, 'only-here.txt'), 'mine');
    const before = fingerprint(other);

    const result = await restoreBackup(settingsOf(other), archive);
    if (!result.ok) throw new Error(result.message);
    expect(markerIn(path.join(other, 'hearth.db'))).toBe('one');
    for (const name of Object.keys(stateFiles)) expect(await readFile(path.join(other, name), 'utf8')).toBe(`${stateFiles[name]} (one)`);
    expect(existsSync(path.join(other, 'only-here.txt'))).toBe(false);
    expect(await readFile(path.join(other, 'npm-cache/_cacache/index'), 'utf8')).toBe('cache (two)');

    expect(result.replaced).toMatch(new RegExp(`^${other}/backups/replaced-`));
    const replaced = fingerprint(result.replaced!);
    expect(replaced['only-here.txt']).toBe(before['only-here.txt']);
    expect(replaced['mcp.json']).toBe(before['mcp.json']);
    expect(markerIn(path.join(result.replaced!, 'hearth.db'))).toBe('two');
    expect(readdirSync(other).filter((name) => name.startsWith('.restore-'))).toEqual([]);
  });

  // `sudo npx hearth restore` into the service's /var/lib/hearth: what root writes there must be the service's to use.
  it.runIf(process.getuid?.() === 0)("run as root, gives everything it writes into DATA_DIR to the folder's owner", async () => {
    const user = await unprivilegedUser();
    await dataDirInUse(dataDir, 'one');
    const archive = await backupOf(dataDir);
    await dataDirInUse(other, 'two');
    await giveFolderTo(user, other);

    const result = await restoreBackup(settingsOf(other), archive);
    if (!result.ok) throw new Error(result.message);
    const owners = readdirSync(other, { recursive: true, encoding: 'utf8' }).map((name) => [name, lstatSync(path.join(other, name)).uid]);
    expect(owners.filter(([, uid]) => uid !== user.uid)).toEqual([]);
    expect(owners.map(([name]) => name)).toEqual(expect.arrayContaining(['hearth.db', 'hearth.lock', 'mcp.json', 'backups', path.relative(other, result.replaced!)]));
  });

  it.runIf(process.getuid?.() === 0)('run as root, leaves an archive it writes into DATA_DIR, and the folder it makes there, to the folder\'s owner', async () => {
    const user = await unprivilegedUser();
    await dataDirInUse(dataDir, 'one');
    await rm(path.join(dataDir, 'backups'), { recursive: true });
    await giveFolderTo(user, dataDir);
    const result = await createBackup(settingsOf(dataDir), path.join(dataDir, 'backups', 'mine.tar.gz'));
    if (!result.ok) throw new Error(result.message);
    expect([lstatSync(path.join(dataDir, 'backups')).uid, lstatSync(result.file).uid]).toEqual([user.uid, user.uid]);
  });

  describe('refuses, changing nothing,', () => {
    let archive: string;
    let before: Record<string, string>;
    beforeEach(async () => {
      await dataDirInUse(dataDir, 'one');
      archive = await backupOf(dataDir);
      await dataDirInUse(other, 'two');
      before = fingerprint(other);
    });

    async function refusal(file: string): Promise<string> {
      const result = await restoreBackup(settingsOf(other), file);
      if (result.ok) throw new Error('restored');
      // The lock the restore took, and SQLite's side files of reading the database here, are not state.
      const withoutSideFiles = (found: Record<string, string>) =>
        Object.fromEntries(Object.entries(found).filter(([name]) => !/^hearth\.lock|^hearth\.db-(wal|shm)$/.test(name)));
      expect(withoutSideFiles(fingerprint(other))).toEqual(withoutSideFiles(before));
      expect(markerIn(path.join(other, 'hearth.db'))).toBe('two');
      return result.message;
    }

    it('an archive cut short', async () => {
      const { size } = await import('node:fs').then((fs) => fs.statSync(archive));
      await truncate(archive, Math.floor(size / 2));
      expect(await refusal(archive)).toBe(`Refusing to restore ${archive}: the archive is damaged or is not a .tar.gz (zlib: unexpected end of file). Nothing was changed.`);
    });

    it('an archive with one byte changed', async () => {
      const bytes = await readFile(archive);
      bytes[Math.floor(bytes.length / 2)]! ^= 0xff;
      await writeFile(archive, bytes);
      expect(await refusal(archive)).toMatch(new RegExp(`^Refusing to restore ${archive}: the archive is damaged or is not a \\.tar\\.gz \\(.+\\)\\. Nothing was changed\\.$`));
    });

    it('a whole archive whose file differs from its checksum, or that holds a file the manifest does not list', async () => {
      const unpacked = path.join(folder, 'unpacked');
      await mkdir(unpacked);
      await extract({ file: archive, cwd: unpacked });
      await writeFile(path.join(unpacked, 'data', 'mcp.json'), '{"servers":{"evil":{}}}');
      const changed = path.join(folder, 'changed.tar.gz');
      await createTar({ gzip: true, file: changed, cwd: unpacked }, ['manifest.json', 'hearth.db', 'data']);
      expect(await refusal(changed)).toBe(`Refusing to restore ${changed}: mcp.json does not match its checksum in the manifest. Nothing was changed.`);

      await extract({ file: archive, cwd: unpacked });
      await writeFile(path.join(unpacked, 'data', 'extra.txt'), 'slipped in');
      const extra = path.join(folder, 'extra.tar.gz');
      await createTar({ gzip: true, file: extra, cwd: unpacked }, ['manifest.json', 'hearth.db', 'data']);
      expect(await refusal(extra)).toBe(`Refusing to restore ${extra}: files the manifest does not list are in it: extra.txt. Nothing was changed.`);
    });

    it('a database that fails the integrity check, or comes from a newer Hearth', async () => {
      const unpacked = path.join(folder, 'unpacked');
      await mkdir(unpacked);
      await extract({ file: archive, cwd: unpacked });
      const manifestFile = path.join(unpacked, 'manifest.json');
      const manifest = JSON.parse(await readFile(manifestFile, 'utf8'));
      const database = new SqliteDatabase(path.join(unpacked, 'hearth.db'));
      database.pragma('journal_mode = DELETE');
      database.prepare('INSERT INTO kysely_migration (name, timestamp) VALUES (?, ?)').run('2099-01-01-from-the-future', new Date().toISOString());
      database.close();
      const measured = fingerprint(unpacked)['hearth.db']!;
      const { size } = await import('node:fs').then((fs) => fs.statSync(path.join(unpacked, 'hearth.db')));
      await writeFile(manifestFile, JSON.stringify({ ...manifest, last_migration: '2099-01-01-from-the-future', database: { size, sha256: measured } }));
      const newer = path.join(folder, 'newer.tar.gz');
      await createTar({ gzip: true, file: newer, cwd: unpacked }, ['manifest.json', 'hearth.db', 'data']);
      expect(await refusal(newer)).toBe(
        `Refusing to restore ${newer}: its database comes from a newer Hearth (0.1.0: migration 2099-01-01-from-the-future, which this Hearth does not know); upgrade Hearth first. Nothing was changed.`,
      );

      // A page of the table's b-tree overwritten, and the manifest measuring the damaged file, as a backup of a damaged disk would.
      const bytes = await readFile(path.join(unpacked, 'hearth.db'));
      bytes.fill(0x41, 4096 * 3, 4096 * 3 + 2000);
      await writeFile(path.join(unpacked, 'hearth.db'), bytes);
      await writeFile(manifestFile, JSON.stringify({ ...manifest, database: { size: bytes.length, sha256: createHash('sha256').update(bytes).digest('hex') } }));
      const damaged = path.join(folder, 'damaged.tar.gz');
      await createTar({ gzip: true, file: damaged, cwd: unpacked }, ['manifest.json', 'hearth.db', 'data']);
      expect(await refusal(damaged)).toMatch(new RegExp(`^Refusing to restore ${damaged}: (the database fails SQLite's integrity check|its database does not open) \\(.+\\)\\. Nothing was changed\\.$`));
    });

    it('what is not a Hearth backup', async () => {
      const plain = path.join(folder, 'plain.tar.gz');
      await writeFile(path.join(folder, 'notes.txt'), 'hello');
      await createTar({ gzip: true, file: plain, cwd: folder }, ['notes.txt']);
      expect(await refusal(plain)).toBe(`Refusing to restore ${plain}: it holds what no Hearth backup holds: notes.txt. Nothing was changed.`);
    });

    it('while another holds the DATA_DIR', async () => {
      const held = acquireInstanceLock(other);
      if (!held.ok) throw new Error(held.message);
      try {
        expect(await refusal(archive)).toBe(
          `A Hearth is running on DATA_DIR ${other} (it holds ${path.join(other, 'hearth.lock')}). Stop it first (\`systemctl stop hearth\`), then restore. Nothing was changed.`,
        );
      } finally {
        held.lock.release();
      }
    });
  });
});
