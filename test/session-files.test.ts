import { mkdir, symlink, writeFile } from 'node:fs/promises';
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { useHearth, type Hearth } from './support/hearth-server.ts';

// The files of a session's folder over REST (the page's Files panel): listed, downloaded, deleted,
// only by those who see the session, and never through a link a tool left in its work folder.

const startApp = useHearth();

async function upload(hearth: Hearth, sessionId: string, name: string, content: string) {
  const form = new FormData();
  form.append('file', new Blob([content]), name);
  const response = await fetch(`${hearth.baseUrl}/sessions/${sessionId}/files`, { method: 'POST', body: form });
  expect(response.status).toBe(200);
  return (await response.json()) as { name: string; path: string };
}

const fileUrl = (hearth: Hearth, sessionId: string, name: string) => `${hearth.baseUrl}/sessions/${sessionId}/files/${name.split('/').map(encodeURIComponent).join('/')}`;

describe('a session\'s files', () => {
  it('lists uploads and what tools wrote with size, time and the retention, downloads each as an attachment and deletes it', async () => {
    const hearth = await startApp({ env: { SESSION_FILES_TTL_HOURS: '48' } });
    const sessionId = await hearth.createSession();
    const uploaded = await upload(hearth, sessionId, 'shopping list.txt', 'eggs\nmilk\n');
    const folder = path.dirname(uploaded.path);
    await mkdir(path.join(folder, 'out'));
    await writeFile(path.join(folder, 'out', 'report.html'), '<script>alert(1)</script>');
    await writeFile(path.join(folder, '.upload-0123456789abcdef'), 'half received');

    const listed = await hearth.request('GET', `/sessions/${sessionId}/files`);
    expect(listed.body.retention_hours).toBe(48);
    expect(listed.body.files.map((file: { name: string }) => file.name).sort()).toEqual(['out/report.html', 'shopping list.txt']);
    expect(listed.body.files.find((file: { name: string }) => file.name === 'shopping list.txt')).toEqual({ name: 'shopping list.txt', size: 10, modified_at: expect.any(String) });

    const download = await fetch(fileUrl(hearth, sessionId, 'out/report.html'));
    expect(download.status).toBe(200);
    expect(download.headers.get('content-type')).toBe('application/octet-stream');
    expect(download.headers.get('content-disposition')).toBe("attachment; filename*=UTF-8''report.html");
    expect(await download.text()).toBe('<script>alert(1)</script>');
    expect(await (await fetch(fileUrl(hearth, sessionId, 'shopping list.txt'))).text()).toBe('eggs\nmilk\n');

    expect((await fetch(fileUrl(hearth, sessionId, 'shopping list.txt'), { method: 'DELETE' })).status).toBe(204);
    expect((await hearth.request('GET', `/sessions/${sessionId}/files`)).body.files.map((file: { name: string }) => file.name)).toEqual(['out/report.html']);
    expect((await fetch(fileUrl(hearth, sessionId, 'shopping list.txt'))).status).toBe(404);
    expect((await fetch(fileUrl(hearth, sessionId, 'shopping list.txt'), { method: 'DELETE' })).status).toBe(404);
  });

  it('never follows a link out of the folder, nor a path that climbs out', async () => {
    const hearth = await startApp();
    const sessionId = await hearth.createSession();
    const { path: notes } = await upload(hearth, sessionId, 'notes.txt', 'mine');
    const folder = path.dirname(notes);
    const outside = path.join(hearth.dataDir, 'outside');
    await mkdir(outside);
    await writeFile(path.join(outside, 'secret.txt'), 'not yours');
    await symlink(path.join(outside, 'secret.txt'), path.join(folder, 'secret-link.txt'));
    await symlink(outside, path.join(folder, 'elsewhere'));
    execFileSync('mkfifo', [path.join(folder, 'pipe')]);

    const names = (await hearth.request('GET', `/sessions/${sessionId}/files`)).body.files.map((file: { name: string }) => file.name);
    expect(names).toEqual(['notes.txt']);
    for (const name of ['secret-link.txt', 'elsewhere/secret.txt', 'pipe', '..%2F..%2Foutside%2Fsecret.txt']) {
      const url = `${hearth.baseUrl}/sessions/${sessionId}/files/${name}`;
      expect((await fetch(url)).status, name).toBe(404);
      expect((await fetch(url, { method: 'DELETE' })).status, name).toBe(404);
    }
    expect(execFileSync('cat', [path.join(outside, 'secret.txt')]).toString()).toBe('not yours');
  });

  it('is someone else\'s session: 404 as a missing one', async () => {
    const hearth = await startApp();
    expect((await hearth.request('GET', '/sessions/00000000-0000-4000-8000-000000000000/files')).body.error.code).toBe('session_not_found');
    expect((await fetch(`${hearth.baseUrl}/sessions/00000000-0000-4000-8000-000000000000/files/notes.txt`)).status).toBe(404);
  });
});
