import { configDefaults, defineConfig } from 'vitest/config';

// The suites that add links to this machine (a veth pair to a stand-in LAN device), one after
// another in one file. Chromium drops the requests it has in flight when the machine's network
// changes (ERR_NETWORK_CHANGED), so a page opened meanwhile loads blank, and the other security
// files' probers try every address the machine has. So the browser and security files run
// first; then this file beside the rest, started first (projects of a group are queued by
// name), so that its one worker's 40 s are not a tail the other workers wait through.
const changesHostNetwork = 'test/security/host-network.test.ts';
const beforeHostNetwork = ['test/browser/**/*.test.ts', 'test/security/**/*.test.ts'];

export default defineConfig({
  test: {
    testTimeout: 20_000,
    hookTimeout: 20_000,
    // A run that finds no test file must fail, never pass silently.
    passWithNoTests: false,
    // Vitest's default is one worker fewer than the cores: one on a 2-core machine, where much of
    // a test's time is spent waiting on servers, child processes and the browser. Three: with a
    // third of a run's CPU cut (issue 32) they keep both cores busy through those waits, and the
    // timed checks hold (bench/RESULTS.md, "npm test").
    maxWorkers: 3,
    // Test files share their worker's module cache: importing the app costs 2.5-3 s a file, and
    // about a hundred files start it. What src/ keeps at module level is facts about the machine
    // (where Node and Python are, the jail's view of the system) and lazily loaded clients; each
    // test builds its own app, database and folders, and puts back what it changes in the process.
    // These three undo what a file forgets.
    isolate: false,
    restoreMocks: true,
    unstubEnvs: true,
    unstubGlobals: true,
    // Builds src/ once per run as `npm run build` does; the tests that start Hearth as a child
    // process start that bundle, as `npm start` does, instead of paying tsx at every start.
    // One Chromium for the run, which the browser files connect to; closed at the end.
    // First, so its teardown runs last: it fails the run when a process the tests started still runs.
    globalSetup: ['test/support/leftover-processes-setup.ts', 'test/support/hearth-build-setup.ts', 'test/support/chromium-server-setup.ts'],
    projects: [
      { extends: true, test: { name: 'hearth', include: beforeHostNetwork, exclude: [...configDefaults.exclude, changesHostNetwork] } },
      { extends: true, test: { name: 'host-network', include: [changesHostNetwork], sequence: { groupOrder: 1 } } },
      { extends: true, test: { name: 'rest', include: ['test/**/*.test.ts'], exclude: [...configDefaults.exclude, ...beforeHostNetwork], sequence: { groupOrder: 1 } } },
    ],
  },
});
