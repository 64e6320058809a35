import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { documentFolder, type DocumentFolder } from './support/document-files.ts';
import { EventSocket } from './support/event-socket.ts';
import { useHearth, type Hearth } from './support/hearth-server.ts';

// The documents routes through the real server, library and indexer: a PDF added over REST is followed on the events
// socket to `ready`, found by a question about its page 3, opened at that passage, downloaded, and deleted for good.
// Who may do what on each route is test/people-matrix.test.ts's; the routes' refusals are test/internals/document-routes.test.ts's.

let files: DocumentFolder | undefined;
afterEach(async () => {
  await files?.remove();
  files = undefined;
});
const start = useHearth();

type Frame = { type: string; document?: { id: string; status: string; progress: number | null; error: string | null }; id?: string };

async function addFile(hearth: Hearth, file: { path: string; name: string }, library: 'mine' | 'household'): Promise<{ status: number; body: any }> {
  const form = new FormData();
  form.append('library', library);
  form.append('file', new Blob([new Uint8Array(await readFile(file.path))]), file.name);
  const response = await fetch(`${hearth.baseUrl}/documents`, { method: 'POST', body: form });
  return { status: response.status, body: await response.json() };
}

function statusOf(socket: EventSocket, id: string, wanted: (frame: Frame) => boolean, what: string) {
  return socket.nextMatching((event) => {
    const frame = event as unknown as Frame;
    return frame.type === 'document_status' && frame.document?.id === id && wanted(frame);
  }, what, 30_000) as unknown as Promise<Frame>;
}

describe('documents over REST and /ws/events', () => {
  it('a PDF goes from queued through indexing to ready, answers a question about page 3 with that passage, and is deleted for good', async () => {
    const hearth = await start();
    files = await documentFolder();
    const pdf = await files.pdf('boiler manual.pdf', [
      [{ heading: 'Safety', paragraphs: ['Keep the area around the boiler clear of anything that burns.'] }],
      [{ heading: 'Operation', paragraphs: ['Turn the dial to set the water temperature between 40 and 60 degrees.'] }],
      [{ heading: 'Warranty', paragraphs: ['The heat exchanger is under warranty for seven years if the boiler is serviced every year.'] }],
    ]);
    const socket = await EventSocket.connect(`${hearth.baseUrl.replace('http', 'ws')}/ws/events`);
    await socket.nextMatching((event) => (event.type as string) === 'hello', 'hello');

    const added = await addFile(hearth, pdf, 'household');
    expect(added.status).toBe(201);
    expect(added.body).toMatchObject({ name: 'boiler manual.pdf', library: 'household', media_type: 'application/pdf', status: 'queued', source: 'rest', size: (await readFile(pdf.path)).length });
    const id = added.body.id as string;
    await statusOf(socket, id, (frame) => frame.document!.status === 'indexing', 'indexing');
    const ready = await statusOf(socket, id, (frame) => frame.document!.status === 'ready' || frame.document!.status === 'failed', 'ready');
    expect(ready.document).toMatchObject({ status: 'ready', error: null, progress: null });
    const summary = (await hearth.request('GET', `/documents/${id}`)).body;
    expect(summary).toMatchObject({ pages: 3, status: 'ready' });
    expect((await hearth.request('GET', '/documents')).body.documents.map((document: { id: string }) => document.id)).toEqual([id]);

    const { body: found } = await hearth.request('GET', `/documents/search?q=${encodeURIComponent('how long is the warranty on the heat exchanger')}&limit=3`);
    expect(found.results[0]).toMatchObject({ document_id: id, name: 'boiler manual.pdf', page: 3, heading: 'Warranty' });
    expect(found.results[0].text).toContain('seven years');
    const passage = found.results[0].passage as number;
    const { body: opened } = await hearth.request('GET', `/documents/${id}/passages?from=${passage}&count=1`);
    expect(opened.passages).toEqual([{ document_id: id, ordinal: passage, page: 3, heading: 'Warranty', text: found.results[0].text }]);

    const download = await fetch(`${hearth.baseUrl}/documents/${id}/file`);
    expect(download.headers.get('content-disposition')).toBe(`attachment; filename*=UTF-8''${encodeURIComponent('boiler manual.pdf')}`);
    expect(Buffer.from(await download.arrayBuffer()).equals(await readFile(pdf.path))).toBe(true);

    expect((await hearth.request('DELETE', `/documents/${id}`)).status).toBe(204);
    await socket.nextMatching((event) => (event as unknown as Frame).type === 'document_deleted' && (event as unknown as Frame).id === id, 'document_deleted');
    expect((await hearth.request('GET', `/documents/${id}`)).body.error.code).toBe('document_not_found');
    expect((await hearth.request('GET', `/documents/search?q=${encodeURIComponent('warranty heat exchanger')}`)).body).toEqual({ results: [] });
    expect((await hearth.request('GET', `/documents/${id}/passages`)).status).toBe(404);
    socket.socket.close();
  });

  it('a scanned PDF ends failed with the reason, said over the socket and in its summary', async () => {
    const hearth = await start();
    files = await documentFolder();
    const socket = await EventSocket.connect(`${hearth.baseUrl.replace('http', 'ws')}/ws/events`);
    await socket.nextMatching((event) => (event.type as string) === 'hello', 'hello');
    const added = await addFile(hearth, await files.scannedPdf('letter.pdf'), 'mine');
    expect(added.status).toBe(201);
    const ended = await statusOf(socket, added.body.id, (frame) => frame.document!.status === 'failed' || frame.document!.status === 'ready', 'failed');
    expect(ended.document).toMatchObject({ status: 'failed', error: 'This PDF has no text layer (a scanned image); Hearth does not read text in images (OCR).' });
    expect((await hearth.request('GET', `/documents/${added.body.id}`)).body.error).toBe(ended.document!.error);
    socket.socket.close();
  });

  it('the owner turns documents_search on and off for a profile, in its copy under DATA_DIR/profiles', async () => {
    const hearth = await start();
    const enabled = async () => ((await hearth.request('GET', '/agents/profiles')).body.profiles.find((profile: { id: string }) => profile.id === 'smart_home').enabled_tools as string[]);
    expect(await enabled()).not.toContain('documents_search');
    const on = await hearth.request('PATCH', '/agents/profiles/smart_home', { documents: true });
    expect(on.status).toBe(200);
    expect(on.body.enabled_tools).toContain('documents_search');
    expect(await enabled()).toContain('documents_search');
    const written = await readFile(path.join(hearth.dataDir, 'profiles', 'smart_home.md'), 'utf8');
    expect(written).toMatch(/^ {2}- documents_search$/m);
    const off = await hearth.request('PATCH', '/agents/profiles/smart_home', { documents: false });
    expect(off.body.enabled_tools).not.toContain('documents_search');
    expect((await hearth.request('PATCH', '/agents/profiles/smart_home', {})).status).toBe(400);
    expect((await hearth.request('PATCH', '/agents/profiles/smart_home', { documents: 'yes' })).status).toBe(400);
  });
});
