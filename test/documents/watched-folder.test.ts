// DOCUMENTS_WATCH_DIR (issue 39): files in the folder go into the household library as the
// owner's, a change replaces a file's document, a removal deletes it, and a restart adds only
// what changed while Hearth was not running. Real files and chokidar, the real library on a
// real SQLite file with the real extractor (pdftotext in its jail) and the stand-in embedder.
import { mkdir, mkdtemp, rm, unlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import type { DocumentEvent, DocumentSummary } from '../../src/documents/document-types.ts';
import { WatchedFolder } from '../../src/documents/watched-folder.ts';
import { documentFolder } from '../support/document-files.ts';
import { LibraryBench } from '../support/document-library.ts';
import { recordingLogger } from '../support/recording-logger.ts';
import { waitUntil } from '../support/wait-until.ts';

let bench: LibraryBench;
let scratch: string;
let folder: string;
let stateFile: string;
let events: DocumentEvent[];
const running: WatchedFolder[] = [];

beforeEach(async () => {
  bench = await LibraryBench.open();
  scratch = await mkdtemp(path.join(tmpdir(), 'hearth-watched-'));
  folder = path.join(scratch, 'inbox');
  stateFile = path.join(bench.documentsDir, 'watched-folder.json');
  await mkdir(folder);
  events = [];
  bench.library.on((event) => events.push(event));
});

afterEach(async () => {
  for (const watched of running.splice(0)) await watched.stop();
  await bench.close();
  await rm(scratch, { recursive: true, force: true });
});

async function startWatching(options: { maxBytes?: number } = {}) {
  const { logger, lines } = recordingLogger();
  const owner = bench.people.owner;
  const watched = new WatchedFolder({ folder, library: bench.library, owner: async () => owner, stateFile, logger, stabilityMs: 50, ...options });
  running.push(watched);
  await watched.start();
  return { watched, lines };
}

async function stopWatching(watched: WatchedFolder): Promise<void> {
  await watched.stop();
  running.splice(running.indexOf(watched), 1);
}

function byName(name: string): DocumentSummary | undefined {
  return bench.library.list(bench.caller('owner')).find((document) => document.name === name);
}

function names(): string[] {
  return bench.library.list(bench.caller('owner')).map((document) => document.name).sort();
}

function exists(id: string): boolean {
  return bench.library.get(bench.caller('owner'), id) !== undefined;
}

it('adds what is in the folder at start to the household library as the owner\'s, then what is written there, replaces what changes and deletes what goes', async () => {
  await writeFile(path.join(folder, 'wifi.txt'), 'Network: home-5g\n');
  await mkdir(path.join(folder, 'kitchen'));
  const pdfs = await documentFolder(path.join(folder, 'kitchen', 'manuals-'));
  await pdfs.pdf('hood.pdf', [[{ heading: 'Hood', paragraphs: ['Read me first.'] }], [{ heading: 'Filters', paragraphs: ['The hood takes filter CF-22.'] }]]);
  const hood = `kitchen/${path.basename(pdfs.folder)}/hood.pdf`;
  // Never read: hidden files, and kinds of file that are not documents.
  await writeFile(path.join(folder, '.draft.md'), 'hidden\n');
  await writeFile(path.join(folder, 'photo.jpg'), Buffer.from([0xff, 0xd8, 0xff]));

  await startWatching();
  expect(names()).toEqual([hood, 'wifi.txt']);
  expect(byName('wifi.txt')).toMatchObject({ library: 'household', owner_person_id: null, added_by: bench.people.owner.id, source: 'folder' });
  // Indexed as any other document: the PDF's second page is found under its heading.
  const ready = await bench.reaches(byName(hood)!.id, 'ready');
  expect(ready.pages).toBe(2);
  const [found] = await bench.library.search(bench.caller('adult'), 'which filter does the hood take');
  expect(found).toMatchObject({ name: hood, page: 2, heading: 'Filters' });

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
  expect(exists(before.id)).toBe(false);
  expect(events.findIndex((event) => event.type === 'document_status' && event.document.id === after.id)).toBeLessThan(
    events.findIndex((event) => event.type === 'document_deleted' && event.id === before.id),
  );

  await unlink(path.join(pdfs.folder, 'hood.pdf'));
  await waitUntil(() => byName(hood) === undefined);
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
  expect(exists(edited.id)).toBe(false);
  expect(exists(removed.id)).toBe(false);
  // The unchanged file was not added again, not even to be replaced.
  const added = events.flatMap((event) => (event.type === 'document_status' && event.document.status === 'queued' ? [event.document.name] : []));
  expect(added.sort()).toEqual(['edited.txt', 'new.txt']);
});

it('leaves out a file over the size limit unread, and logs a file the library refuses, trying neither again until it changes', async () => {
  await writeFile(path.join(folder, 'huge.txt'), 'x'.repeat(2048));
  await writeFile(path.join(folder, 'binary.txt'), Buffer.from([0, 1, 2, 3, 0xff, 0xfe]));
  const { watched, lines } = await startWatching({ maxBytes: 1024 });
  expect(names()).toEqual([]);
  expect(lines.join('')).toMatch(/huge\.txt.*larger than the upload limit/);
  expect(lines.join('')).toMatch(/binary\.txt.*unsupported_type.*not added: binary\.txt is a kind of file Hearth does not read/);
  await stopWatching(watched);

  // Remembered as seen: a restart does not ask the library again.
  const again = await startWatching({ maxBytes: 1024 });
  expect(again.lines.join('')).not.toMatch(/huge\.txt|binary\.txt/);
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

it('keeps the documents of a folder that is not there at start (a drive not mounted yet), and says so', async () => {
  await writeFile(path.join(folder, 'kept.txt'), 'Still here.\n');
  const first = await startWatching();
  const kept = byName('kept.txt')!;
  await stopWatching(first.watched);
  await rm(folder, { recursive: true });
  const { lines } = await startWatching();
  expect(lines.join('')).toMatch(/DOCUMENTS_WATCH_DIR is not a folder/);
  expect(exists(kept.id)).toBe(true);
});
