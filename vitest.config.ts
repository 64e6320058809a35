import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 20_000,
    hookTimeout: 20_000,
    // A run that finds no test file must fail, never pass silently.
    passWithNoTests: false,
    // Test files share their worker's module cache: importing the app costs 2.5-3 s a file, and
    // about a hundred files start it. What src/ keeps at module level is facts about the machine
    // (where Node and Python are, the jail's view of the system) and lazily loaded clients; each
    // test builds its own app, database and folders, and puts back what it changes in the process.
    // These three undo what a file forgets.
    isolate: false,
    restoreMocks: true,
    unstubEnvs: true,
    unstubGlobals: true,
  },
});
