// Vitest globalSetup: one Chromium for the whole run. The browser test files connect to it
// (test/support/browser.ts `useBrowser`), each with contexts of its own, instead of launching
// Chromium again for every file; the teardown closes it, so no Chromium outlives the run.
import { chromium, type BrowserServer } from 'playwright-core';
import type { TestProject } from 'vitest/node';
import { browserAvailable, launchOptions, type SharedChromium } from './chromium.ts';

// Vitest runs a globalSetup once for the root project and once for each project that extends
// it, in this same process: the first launches, the others are given the same browser.
const shared = Symbol.for('hearth.testChromium');
interface SharedServer {
  server: Promise<BrowserServer | undefined>;
  provided: Promise<SharedChromium>;
  projects: TestProject[];
}
const state = globalThis as typeof globalThis & { [shared]?: SharedServer };

async function launch(): Promise<{ server?: BrowserServer; provided: SharedChromium }> {
  // Without Chromium each browser file skips or fails as useBrowser decides, saying why.
  if (!browserAvailable) return { provided: { unavailable: true } };
  try {
    const server = await chromium.launchServer(launchOptions());
    return { server, provided: { wsEndpoint: server.wsEndpoint() } };
  } catch (error) {
    return { provided: { error: (error as Error).message } };
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  let current = state[shared];
  if (current === undefined) {
    const launching = launch();
    current = state[shared] = {
      server: launching.then(({ server }) => server),
      provided: launching.then(({ provided }) => provided),
      projects: [],
    };
  }
  current.projects.push(project);
  project.provide('sharedChromium', await current.provided);
  const ours = current;
  return async () => {
    ours.projects.splice(ours.projects.indexOf(project), 1);
    if (ours.projects.length > 0) return;
    state[shared] = undefined;
    await (await ours.server)?.close();
  };
}
