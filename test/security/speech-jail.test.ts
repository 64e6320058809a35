// Audio a person sends is decoded by ffmpeg in the strict jail without network (docs/security.md,
// *Audio*), also when Hearth runs as an ordinary user, where bubblewrap works through unprivileged
// user namespaces: ffmpeg decodes the recording there, and cannot fetch a URL it is handed.
import { execFile } from 'node:child_process';
import { once } from 'node:events';
import { rm } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { promisify } from 'node:util';
import { expect, it } from 'vitest';
import { folderOwnedBy, unprivilegedUser } from '../support/unprivileged-user.ts';
import { describeWithVoiceTools } from '../support/voice-tools.ts';

const run = promisify(execFile);

describeWithVoiceTools('ffmpeg in the jail, as an unprivileged user', () => {
  it('decodes a recording and reaches no network', async () => {
    const user = await unprivilegedUser();
    const dataDir = await folderOwnedBy(user, 'hearth-speech-jail-');
    let requests = 0;
    const server = createServer((_request, response) => {
      requests += 1;
      response.end('RIFF');
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/tone.wav`;
      const { stdout } = await run(process.execPath, ['--import', 'tsx', path.resolve('test/support/audio-jail-probe.ts'), dataDir, url], {
        uid: user.uid,
        gid: user.gid,
        cwd: path.resolve('.'),
        env: { PATH: process.env.PATH, HOME: user.home, LANG: 'C.UTF-8' },
        timeout: 60_000,
      });
      const probed = JSON.parse(stdout) as { uid: number; jail: string; decoded: { seconds?: number }; fetched: { ok: boolean; stderr: string } };
      expect(probed.uid).toBe(user.uid);
      expect(probed.jail).toBe('on');
      expect(probed.decoded.seconds).toBeCloseTo(1, 1);
      expect(probed.fetched.ok).toBe(false);
      expect(requests).toBe(0);
    } finally {
      server.close();
      await rm(dataDir, { recursive: true, force: true });
    }
  }, 90_000);
});
