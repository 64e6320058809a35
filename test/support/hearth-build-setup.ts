// Vitest globalSetup: builds src/ once per run with package.json's own `build` command (the
// bundle `npm start` runs), so the tests that start Hearth as a child process start that bundle
// rather than compiling the sources through tsx at every start. test/support/hearth-build.ts
// gives the tests the command that starts it.
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdir, readdir, rm, symlink } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import type { TestProject } from 'vitest/node';
import { hearthBuildsFolder, type HearthBuild } from './hearth-build.ts';

const run = promisify(execFile);
const checkout = path.resolve('.');

/** A run's folder is named by the process that made it; one whose process is gone was left by a run that was killed. */
function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

async function removeLeftBuilds(): Promise<void> {
  const entries = await readdir(hearthBuildsFolder).catch(() => [] as string[]);
  for (const entry of entries) {
    const pid = Number(/^run-(\d+)$/.exec(entry)?.[1]);
    if (Number.isInteger(pid) && pid !== process.pid && !isRunning(pid)) await rm(path.join(hearthBuildsFolder, entry), { recursive: true, force: true });
  }
}

/**
 * `npm run build`'s command (node scripts/build.mjs) with the output moved into `folder/dist`. Its
 * files end in .mjs: under node_modules no package.json says `"type": "module"` (Node stops looking
 * for one at node_modules), and one placed there would become the server's package root.
 */
function buildArguments(folder: string): string[] {
  const manifest = JSON.parse(readFileSync(path.join(checkout, 'package.json'), 'utf8')) as { scripts: { build: string } };
  const [command, script, ...rest] = manifest.scripts.build.split(/\s+/);
  if (command !== 'node' || script !== 'scripts/build.mjs' || rest.length > 0) {
    throw new Error(`package.json's build script is not the command this setup knows: ${manifest.scripts.build}`);
  }
  return [script, `--outdir=${path.join(folder, 'dist')}`, '--out-extension=.mjs'];
}

/**
 * Builds into node_modules/.cache/hearth-build/run-<pid>/dist: inside the checkout, so the server
 * finds the checkout as its package root (package.json, profiles, the src/ files it starts by path)
 * and the jail hides it with the installation; readable by the unprivileged test user. `public`
 * beside `dist` points at the checkout's, where the server looks for the page (`../public`).
 */
async function build(folder: string): Promise<HearthBuild> {
  try {
    await rm(path.join(folder, 'dist'), { recursive: true, force: true });
    await mkdir(folder, { recursive: true });
    await symlink(path.join(checkout, 'public'), path.join(folder, 'public')).catch((error: NodeJS.ErrnoException) => {
      if (error.code !== 'EEXIST') throw error;
    });
    await run(process.execPath, buildArguments(folder), { cwd: checkout });
    return { main: path.join(folder, 'dist', 'main.mjs') };
  } catch (error) {
    // Only the tests that start the build fail, saying why; the rest of the run goes on.
    const stderr = (error as { stderr?: string }).stderr;
    return { error: stderr || (error as Error).message };
  }
}

// Vitest runs a globalSetup once for the root project and once for each project that extends
// it, in this same process: the first builds, the others are given the same build.
const shared = Symbol.for('hearth.testBuild');
interface SharedBuild {
  folder: string;
  build: Promise<HearthBuild>;
  projects: TestProject[];
}
const state = globalThis as typeof globalThis & { [shared]?: SharedBuild };

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  let current = state[shared];
  if (current === undefined) {
    await removeLeftBuilds();
    const folder = path.join(hearthBuildsFolder, `run-${process.pid}`);
    const created: SharedBuild = { folder, build: build(folder), projects: [] };
    current = state[shared] = created;
    // In watch mode the sources change between runs: build again before each.
    project.onTestsRerun(async () => {
      created.build = build(folder);
      const rebuilt = await created.build;
      for (const each of created.projects) each.provide('hearthBuild', rebuilt);
    });
  }
  current.projects.push(project);
  project.provide('hearthBuild', await current.build);
  const ours = current;
  return async () => {
    ours.projects.splice(ours.projects.indexOf(project), 1);
    if (ours.projects.length > 0) return;
    state[shared] = undefined;
    await rm(ours.folder, { recursive: true, force: true });
  };
}
