// DOCUMENTS_WATCH_DIR through the whole server (issue 39): a file already in the folder at start
// and one written while Hearth runs are listed in the household library as the folder's, found
// by a question, and gone once the file is removed. The watcher's own rules (changes, restarts,
// limits) are test/documents/watched-folder.test.ts's.
import { mkdtemp, rm, unlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { useHearth, type Hearth } from './support/hearth-server.ts';
import { waitUntil } from './support/wait-until.ts';

const start = useHearth();
let folder: string | undefined;
afterEach(async () => {
  if (folder) await rm(folder, { recursive: true, force: true });
  folder = undefined;
});

async function listed(hearth: Hearth): Promise<{ name: string; library: string; source: string; status: string }[]> {
  return (await hearth.request('GET', '/documents')).body.documents;
}

it('keeps the watched folder in the household library: a file there at start, one written later, and a removal', async () => {
  folder = await mkdtemp(path.join(tmpdir(), 'hearth-watch-dir-'));
  await writeFile(path.join(folder, 'bins.md'), '# Bins\n\nThe paper bin goes out on Tuesday evening.\n');
  const hearth = await start({ env: { DOCUMENTS_WATCH_DIR: folder } });

  const first = await waitUntil(async () => (await listed(hearth)).find((document) => document.name === 'bins.md' && document.status === 'ready'), 20_000);
  expect(first).toMatchObject({ library: 'household', source: 'folder' });
  const { body } = await hearth.request('GET', `/documents/search?q=${encodeURIComponent('when does the paper bin go out')}`);
  expect(body.results[0]).toMatchObject({ name: 'bins.md', heading: 'Bins' });

  await writeFile(path.join(folder, 'wifi.txt'), 'Guest network: home-guest\n');
  await waitUntil(async () => (await listed(hearth)).some((document) => document.name === 'wifi.txt'), 20_000);

  await unlink(path.join(folder, 'bins.md'));
  await waitUntil(async () => (await listed(hearth)).every((document) => document.name !== 'bins.md'), 20_000);
  expect((await listed(hearth)).map((document) => document.name)).toEqual(['wifi.txt']);
}, 60_000);
