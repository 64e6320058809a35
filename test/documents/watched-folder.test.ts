// DOCUMENTS_WATCH_DIR (issue 39): files in the folder go into the household library as the
// owner's, a change replaces a file's document, a removal deletes it, and a restart adds only
// what changed while Hearth was not running. Real files and chokidar; the library is the
// in-memory test double of DocumentLibrary, which keeps the same rules of who adds and deletes.
import { mkdir, mkdtemp, rm, unlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import type { DocumentEvent, DocumentSummary } from '../../src/documents/document-types.ts';
import { WatchedFolder } from '../../src/documents/watched-folder.ts';
import type { Person } from '../../src/people/person.ts';
import { InMemoryDocuments } from '../support/in-memory-documents.ts';
import { recordingLogger } from '../support/recording-logger.ts';
import { waitUntil } from '../support/wait-until.ts';

const owner: Person = { id: 'owner-person', name: 'Ada', role: 'owner', hasPassphrase: true, createdAt: '2026-11-01T00:00:00.000Z' };
const ownerCaller = { person: owner, via: 'auth_token' as const };

let scratch: string;
let folder: string;
let stateFile: string;
let library: InMemoryDocuments;
let events: DocumentEvent[];
const running: WatchedFolder[] = [];

beforeEach(async () => {
  scratch = await mkdtemp(path.join(tmpdir(), 'hearth-watched-'));
  folder = path.join(scratch, 'inbox');
  stateFile = path.join(scratch, 'data', 'documents', 'watched-folder.json');
  await mkdir(folder);
  library = new InMemoryDocuments();
  events = [];
  library.on((event) => events.push(event));
});

afterEach(async () => {
  for (const watched of running.splice(0)) await watched.stop();
  library.close();
  await rm(scratch, { recursive: true, force: true });
});

async function startWatching(options: { maxBytes?: number } = {}) {
  const { logger, lines } = recordingLogger();
  const watched = new WatchedFolder({ folder, library, owner: async () => owner, stateFile, logger, stabilityMs: 50, ...options });
  running.push(watched);
  await watched.start();
  return { watched, lines };
}

async function stopWatching(watched: WatchedFolder): Promise<void> {
  await watched.stop();
  running.splice(running.indexOf(watched), 1);
}

function byName(name: string): DocumentSummary | undefined {
  return library.list(ownerCaller).find((document) => document.name === name);
}

function names(): string[] {
  return library.list(ownerCaller).map((document) => document.name).sort();
}

it('adds what is in the folder at start to the household library as the owner\'s, then what is written there, replaces what changes and deletes what goes', async () => {
  await writeFile(path.join(folder, 'wifi.txt'), 'Network: home-5g\n');
  await mkdir(path.join(folder, 'kitchen'));
  await writeFile(path.join(folder, 'kitchen', 'hood.md'), '# Hood\n\nFilter CF-22.\n');
  // Never read: hidden files, and kinds of file that are not documents.
  await writeFile(path.join(folder, '.draft.md'), 'hidden\n');
  await writeFile(path.join(folder, 'photo.jpg'), Buffer.from([0xff, 0xd8, 0xff]));

  await startWatching();
  expect(names()).toEqual(['kitchen/hood.md', 'wifi.txt']);
  expect(byName('wifi.txt')).toMatchObject({ library: 'household', owner_person_id: null, added_by: owner.id, source: 'folder' });

  await writeFile(path.join(folder, 'bins.txt'), 'Paper on Tuesday.\n');
  await waitUntil(() => byName('bins.txt'));

  const before = byName('wifi.txt')!;
  await writeFile(path.join(folder, 'wifi.txt'), 'Network: home-5g\n\nGuests: home-guest\n');
  const after = await waitUntil(() => {
    const found = byName('wifi.txt');
    return found !== undefined && found.id !== before.id && found;
  });
  expect(after.size).toBe('Network: home-5g\n\nGuests: home-guest\n'.length);
  // The earlier document is deleted, after the new one was in.
  await waitUntil(() => events.some((event) => event.type === 'document_deleted' && event.id === before.id));
  expect(library.documents.has(before.id)).toBe(false);
  expect(events.findIndex((event) => event.type === 'document_status' && event.document.id === after.id)).toBeLessThan(
    events.findIndex((event) => event.type === 'document_deleted' && event.id === before.id),
  );

  await unlink(path.join(folder, 'kitchen', 'hood.md'));
  await waitUntil(() => byName('kitchen/hood.md') === undefined);
  expect(names()).toEqual(['bins.txt', 'wifi.txt']);
});

it('after a restart adds only what changed while it was stopped: unchanged files keep their documents', async () => {
  await writeFile(path.join(folder, 'same.txt'), 'Left alone.\n');
  await writeFile(path.join(folder, 'edited.txt'), 'First version.\n');
  await writeFile(path.join(folder, 'removed.txt'), 'Going away.\n');
  const first = await startWatching();
  expect(names()).toEqual(['edited.txt', 'removed.txt', 'same.txt']);
  const kept = byName('same.txt')!;
  const edited = byName('edited.txt')!;
  const removed = byName('removed.txt')!;
  await stopWatching(first.watched);

  await writeFile(path.join(folder, 'edited.txt'), 'Second, longer version.\n');
  await unlink(path.join(folder, 'removed.txt'));
  await writeFile(path.join(folder, 'new.txt'), 'Arrived meanwhile.\n');
  events.length = 0;

  await startWatching();
  expect(names()).toEqual(['edited.txt', 'new.txt', 'same.txt']);
  expect(byName('same.txt')!.id).toBe(kept.id);
  expect(byName('edited.txt')!.id).not.toBe(edited.id);
  expect(library.documents.has(edited.id)).toBe(false);
  expect(library.documents.has(removed.id)).toBe(false);
  // The unchanged file was not added again, not even to be replaced.
  expect(events.filter((event) => event.type === 'document_status').map((event) => event.type === 'document_status' && event.document.name).sort()).toEqual(['edited.txt', 'new.txt']);
});

it('leaves out a file over the size limit unread, and logs a file the library refuses, trying neither again until it changes', async () => {
  await writeFile(path.join(folder, 'huge.txt'), 'x'.repeat(2048));
  await writeFile(path.join(folder, 'manual.pdf'), 'not something the library takes');
  const { watched, lines } = await startWatching({ maxBytes: 1024 });
  expect(names()).toEqual([]);
  expect(lines.join('')).toMatch(/huge\.txt.*larger than the upload limit/);
  expect(lines.join('')).toMatch(/manual\.pdf.*not added: Hearth does not read/);
  await stopWatching(watched);

  // Remembered as seen: a restart does not ask the library again.
  const again = await startWatching({ maxBytes: 1024 });
  expect(again.lines.join('')).not.toMatch(/huge\.txt|manual\.pdf/);
  await writeFile(path.join(folder, 'huge.txt'), 'small now\n');
  await waitUntil(() => byName('huge.txt'));
});

it('forgets what it remembered of another folder when DOCUMENTS_WATCH_DIR changes, leaving those documents in the library', async () => {
  await writeFile(path.join(folder, 'old.txt'), 'From the old folder.\n');
  const first = await startWatching();
  await stopWatching(first.watched);
  const elsewhere = path.join(scratch, 'elsewhere');
  await mkdir(elsewhere);
  await writeFile(path.join(elsewhere, 'other.txt'), 'From the new folder.\n');
  folder = elsewhere;
  await startWatching();
  expect(names()).toEqual(['old.txt', 'other.txt']);
});
