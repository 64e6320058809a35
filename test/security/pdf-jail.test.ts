// PDFs are read by pdftotext in the strict jail without network (docs/security.md, *Documents*):
// the file is untrusted and a PDF parser is a large surface. From that jail, as root and as an
// ordinary user (where bubblewrap works through unprivileged user namespaces), pdftotext reads
// the PDF it is given on its input and nothing of the user's HOME or of DATA_DIR, and nothing
// there reaches the network.
import { execFile } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { folderOwnedBy, unprivilegedUser, type UnprivilegedUser } from '../support/unprivileged-user.ts';

const run = promisify(execFile);

interface Told {
  ok: boolean;
  output: string;
  stderr: string;
}
interface Probed {
  uid: number;
  home: string;
  jail: string;
  outsideReadsHome: boolean;
  extracted: string[] | string;
  readHome: Told;
  readDataDir: Told;
  fetched: Told;
}

let requests = 0;
const server = createServer((_request, response) => {
  requests += 1;
  response.end('reached');
});
let url: string;

beforeAll(async () => {
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/exfiltrate`;
});
afterAll(() => {
  server.close();
});

async function probe(user: UnprivilegedUser | undefined, dataDir: string): Promise<Probed> {
  const { stdout } = await run(process.execPath, ['--import', 'tsx', path.resolve('test/support/pdf-jail-probe.ts'), dataDir, url], {
    ...(user && { uid: user.uid, gid: user.gid }),
    cwd: path.resolve('.'),
    env: { PATH: process.env.PATH, HOME: user?.home ?? process.env.HOME, LANG: 'C.UTF-8' },
    timeout: 60_000,
  });
  return JSON.parse(stdout) as Probed;
}

function expectContained(probed: Probed): void {
  expect(probed.jail).toBe('on');
  // The extractor reads the PDF it is handed…
  expect(probed.extracted).toEqual(['The safe code is 4711']);
  // …the user can read the PDF in their HOME, outside the jail…
  expect(probed.outsideReadsHome).toBe(true);
  // …and from the jail, neither it nor one in DATA_DIR is there to open.
  expect(probed.readHome.ok).toBe(false);
  expect(probed.readHome.output).not.toContain('4711');
  expect(probed.readHome.stderr).toMatch(/Couldn't open file/);
  expect(probed.readDataDir.ok).toBe(false);
  expect(probed.readDataDir.output).not.toContain('4711');
  expect(probed.readDataDir.stderr).toMatch(/Couldn't open file/);
  // Nothing leaves the jail over the network.
  expect(probed.fetched.ok).toBe(false);
  expect(probed.fetched.stderr).toMatch(/^curl: \(\d+\) (Failed to connect|Could not resolve|Couldn't connect)/);
  expect(probed.fetched.output).not.toContain('reached');
  expect(requests).toBe(0);
}

describe('pdftotext in the jail', () => {
  it('as root: reads the PDF it is given, and neither HOME, DATA_DIR nor the network', async () => {
    const dataDir = await mkdtemp(path.join(tmpdir(), 'hearth-pdf-jail-'));
    try {
      const probed = await probe(undefined, dataDir);
      expect(probed.uid).toBe(process.getuid?.());
      expectContained(probed);
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  }, 90_000);

  it('as an unprivileged user: the same', async () => {
    const user = await unprivilegedUser();
    const dataDir = await folderOwnedBy(user, 'hearth-pdf-jail-');
    try {
      const probed = await probe(user, dataDir);
      expect(probed.uid).toBe(user.uid);
      expect(probed.home).toBe(user.home);
      expectContained(probed);
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  }, 90_000);
});
