// Issue 35, the Files panel's routes as an attack: a command the model runs in its jail leaves links in
// the session's work folder that lead to a host file Hearth can read and the jail cannot; the
// person then opens the Files panel and downloads or deletes "the file". Through the real server
// (src/main.ts as a child), as root and as the unprivileged user `hearth-test`: nothing outside the
// folder is listed, read or removed.
import { randomBytes } from 'node:crypto';
import { chmod, lstat, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { unprivilegedUser, type UnprivilegedUser } from '../support/unprivileged-user.ts';
import { startJailedHearth, type JailedHearth } from './jail-harness.ts';

const secretText = `host secret ${randomBytes(4).toString('hex')}`;

for (const as of ['root', 'hearth-test'] as const) {
  describe.skipIf(as === 'root' && process.getuid?.() !== 0)(`a session's files never lead out of its folder, Hearth run by ${as}`, () => {
    let hearth: JailedHearth;
    let outside: string;
    let user: UnprivilegedUser | undefined;

    beforeAll(async () => {
      user = as === 'hearth-test' ? await unprivilegedUser() : undefined;
      // Readable by everyone, so only Hearth's own check stands between a download and it.
      outside = await mkdtemp(path.join(tmpdir(), 'hearth-files-outside-'));
      await chmod(outside, 0o777);
      await writeFile(path.join(outside, 'secret.txt'), secretText, { mode: 0o666 });
      await chmod(path.join(outside, 'secret.txt'), 0o666);
      hearth = await startJailedHearth({ ...(user && { user }) });
    }, 120_000);

    afterAll(async () => {
      await hearth?.close();
      if (outside) await rm(outside, { recursive: true, force: true });
    });

    it('lists, downloads and deletes only the real file the jailed command wrote, never what its links lead to', async () => {
      const sessionId = await hearth.createSession('server_admin');
      const socket = await hearth.connect(sessionId);
      const command = `ln -s ${path.join(outside, 'secret.txt')} secret-link.txt && ln -s ${outside} outside && echo mine > real.txt`;
      hearth.llm.script({ toolCalls: [{ name: 'terminal', arguments: { command } }] }, { content: 'Done.' });
      socket.send({ type: 'message', content: 'Tidy up the folder' });
      // The person allows the command: what it leaves behind is the attack.
      const asked = await socket.next('approval_required', 30_000);
      socket.send({ type: 'approve', call_id: asked.call_id, decision: 'allow' });
      expect((await socket.next('stream_end', 60_000)).content).toBe('Done.');
      const [result] = socket.ofType('tool_call');
      expect(result, JSON.stringify(result)).toMatchObject({ success: true });
      socket.close();
      // The links are there, as the command left them: only Hearth's check stands between them and the host file.
      for (const link of ['secret-link.txt', 'outside']) expect((await lstat(path.join(hearth.sessionFilesDir, sessionId, link))).isSymbolicLink(), link).toBe(true);

      const headers = { authorization: `Bearer ${hearth.token}` };
      const listed = await hearth.request('GET', `/sessions/${sessionId}/files`);
      expect(listed.body.files.map((file: { name: string }) => file.name)).toEqual(['real.txt']);
      const url = (name: string) => `${hearth.baseUrl}/sessions/${sessionId}/files/${name}`;
      expect(await (await fetch(url('real.txt'), { headers })).text()).toBe('mine\n');
      for (const name of ['secret-link.txt', 'outside/secret.txt', '..%2F..%2F..%2Fetc%2Fpasswd']) {
        const download = await fetch(url(name), { headers });
        const text = await download.text();
        expect(download.status, name).toBe(404);
        expect(text, name).not.toContain(secretText);
        expect((await fetch(url(name), { method: 'DELETE', headers })).status, name).toBe(404);
      }
      expect(await readFile(path.join(outside, 'secret.txt'), 'utf8')).toBe(secretText);
    }, 90_000);
  });
}
