// Tests never read the person's configuration (issue 34): run from a working folder holding a
// `.env`, and with a HOME whose ~/.config/hearth/env sets AUTH_TOKEN (as in a clone someone has
// used), the servers tests start, in this process or as children, read neither.
import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { startHearth } from './support/hearth-server.ts';
import { startChildServer, type ChildServer } from './support/server-child.ts';
import { startScriptedOllama } from './support/scripted-ollama.ts';

const checkout = process.cwd();
const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A working folder like a used checkout (its `.env` and the shipped files the helpers read), and a HOME with a config of its own. */
async function personsFolders(): Promise<{ workingFolder: string; home: string }> {
  const root = await mkdtemp(path.join(tmpdir(), 'hearth-persons-'));
  cleanups.push(() => rm(root, { recursive: true, force: true }));
  const workingFolder = path.join(root, 'checkout');
  const home = path.join(root, 'home');
  await mkdir(workingFolder);
  await mkdir(path.join(home, '.config', 'hearth'), { recursive: true });
  for (const shipped of ['package.json', 'profiles', 'node_modules']) await symlink(path.join(checkout, shipped), path.join(workingFolder, shipped));
  await writeFile(path.join(workingFolder, '.env'), 'AUTH_TOKEN=from-the-working-folder\nLOG_LEVEL=silent\n');
  await writeFile(path.join(home, '.config', 'hearth', 'env'), 'AUTH_TOKEN=from-the-persons-config\n');
  return { workingFolder, home };
}

/** Runs `body` from `workingFolder` with HOME at `home`, then puts both back (files share this worker). */
async function inPersonsPlace<T>(folders: { workingFolder: string; home: string }, body: () => Promise<T>): Promise<T> {
  process.chdir(folders.workingFolder);
  vi.stubEnv('HOME', folders.home);
  try {
    return await body();
  } finally {
    process.chdir(checkout);
    vi.unstubAllEnvs();
  }
}

describe('servers started by tests', () => {
  it('in this process read no .env and no ~/.config/hearth/env', async () => {
    const folders = await personsFolders();
    const hearth = await inPersonsPlace(folders, () => startHearth());
    cleanups.push(() => hearth.close());

    expect(hearth.config.AUTH_TOKEN).toBe('');
    expect((await hearth.request('GET', '/agents/profiles')).status).toBe(200);
  });

  it('as child processes read neither the .env of the folder the tests run from nor the person\'s', async () => {
    const folders = await personsFolders();
    const llm = await startScriptedOllama();
    cleanups.push(() => llm.close());
    const dataDir = await mkdtemp(path.join(tmpdir(), 'hearth-isolated-child-'));
    cleanups.push(() => rm(dataDir, { recursive: true, force: true }));
    await mkdir(path.join(dataDir, 'profiles'));
    await symlink(path.join(checkout, 'profiles', 'secretary.md'), path.join(dataDir, 'profiles', 'secretary.md'));
    const child: ChildServer = await inPersonsPlace(folders, () => startChildServer(dataDir, { OLLAMA_HOST: llm.url }));
    cleanups.push(() => child.kill());

    // Either file's AUTH_TOKEN would turn this away with 401.
    expect((await child.request('GET', '/agents/profiles')).status).toBe(200);
  });
});
