// The bundle test/support/hearth-build-setup.ts builds once per run, and the command that starts
// it the way `npm start` starts dist/main.js.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { inject } from 'vitest';

/** What the global setup provides: the built entry, or why the build failed. */
export type HearthBuild = { main: string } | { error: string };

declare module 'vitest' {
  export interface ProvidedContext {
    hearthBuild: HearthBuild;
  }
}

/** Where each run builds, in a folder of its own (runs in the same checkout at once do not share one). */
export const hearthBuildsFolder = path.resolve('node_modules', '.cache', 'hearth-build');

/** A node command line: the executable and its arguments. */
export interface StartCommand {
  executable: string;
  args: string[];
}

/** `npm start`'s node arguments (package.json), with this run's build in place of dist/main.js. */
export function builtStartCommand(): StartCommand {
  const build = inject('hearthBuild');
  if (build === undefined) throw new Error('no Hearth build: vitest.config.ts runs test/support/hearth-build-setup.ts as a globalSetup');
  if ('error' in build) throw new Error(`building src/ for the tests failed:\n${build.error}`);
  const manifest = JSON.parse(readFileSync(path.resolve('package.json'), 'utf8')) as { scripts: { start: string } };
  const [command, ...args] = manifest.scripts.start.split(/\s+/);
  if (command !== 'node' || !args.includes('dist/main.js')) throw new Error(`package.json's start script is not the node command the tests know: ${manifest.scripts.start}`);
  return { executable: process.execPath, args: args.map((arg) => (arg === 'dist/main.js' ? build.main : arg)) };
}

/** `npx hearth` (package.json's bin, bin/hearth.js, which runs the build's dist/cli.js) with this run's build of src/cli.ts. */
export function builtCliCommand(): StartCommand {
  const { executable, args } = builtStartCommand();
  const main = args.find((arg) => arg.endsWith(`${path.sep}main.mjs`))!;
  return { executable, args: [...args.filter((arg) => arg !== main), path.join(path.dirname(main), 'cli.mjs')] };
}
