/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { chromium, type Browser, type BrowserContext, type ConsoleMessage, type Locator, type Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, beforeEach, inject, onTestFinished } from 'vitest';
import { browserAvailable, chromiumMissing, launchBrowser } from './chromium.ts';
import { closedOnce, startHearth, type Hearth, type HearthOptions } from './hearth-server.ts';
import type { ScriptedLlm } from './scripted-llm.ts';
import { startScriptedOllama } from './scripted-ollama.ts';

/** Set by CI: a missing browser then fails the browser tests instead of skipping them. */
export const browserRequired = process.env.HEARTH_REQUIRE_BROWSER === '1';
/** For `describe.skipIf(skipBrowserTests)`. */
export const skipBrowserTests = !browserAvailable && !browserRequired;

export const artifactsDir = path.resolve('test-artifacts');

/** Generous per-test budget for browser tests (passed as the test's options, never slept). */
export const browserTest = { timeout: 60_000 } as const;

/** Close a page as soon as it throws an uncaught error (set HEARTH_BROWSER_KEEP_OPEN=1 to keep it open). */
const failFast = process.env.HEARTH_BROWSER_KEEP_OPEN !== '1';

/** How long one page action or wait may take before it fails with its call log. */
export const actionTimeoutMs = 20_000;

export interface OpenPageOptions {
  /** The session id (or any fragment) for `/#<hash>`. */
  hash?: string;
  viewport?: { width: number; height: number };
  colorScheme?: 'light' | 'dark';
  /** Console errors matching one of these are expected by the test and not counted as failures. */
  allowErrors?: RegExp[];
  /** Open the page in this context (shares cookies) instead of a fresh one. */
  context?: BrowserContext;
  /** Browser permissions granted to the new context, e.g. clipboard-read. */
  permissions?: string[];
}

export interface PageProblems {
  pageErrors: string[];
  consoleErrors: string[];
}

/** One server's data and LLM, to start again on the same port after it was closed (restart tests). */
export interface RestartableHearth {
  llm: ScriptedLlm;
  /** Starts the server (on the first start's port after the first); closed after the test like any other. */
  start(env?: Record<string, string>): Promise<Hearth>;
}

export interface BrowserHarness {
  readonly browser: Browser;
  /** Starts the real app (port 0 unless `port` is given); closed after the test, after its pages. */
  hearth(options?: HearthOptions): Promise<Hearth>;
  /** Opens the app in a new page (own context unless one is given); its errors fail the test. */
  openPage(hearth: Hearth, options?: OpenPageOptions): Promise<Page>;
  /** A data folder and scripted LLM that outlive each server started from them; removed after the test. */
  restartable(): Promise<RestartableHearth>;
  /** Creates a session (with this profile, or the default one) and opens the app on it, ready for input. */
  openSession(hearth: Hearth, profileId?: string): Promise<{ page: Page; sessionId: string }>;
  /** Allows console errors matching `pattern` on every page of the current test. */
  allowErrors(pattern: RegExp): void;
  /** Page errors and console errors seen so far in the current test (not counting allowed ones). */
  problems(): PageProblems;
}

/**
 * Connects to the run's one Chromium (test/support/chromium-server-setup.ts). Closing the
 * connection closes every context it opened; the browser stays up for the other files.
 */
async function connectToRunsBrowser(): Promise<Browser> {
  const shared = inject('sharedChromium');
  if (shared === undefined) throw new Error('no shared Chromium: vitest.config.ts runs test/support/chromium-server-setup.ts as a globalSetup');
  if ('unavailable' in shared) throw new Error(chromiumMissing);
  if ('error' in shared) throw new Error(`launching the run's Chromium failed: ${shared.error}`);
  return chromium.connect(shared.wsEndpoint, { timeout: 30_000 });
}

export interface UseBrowserOptions {
  /** Launch a Chromium of the file's own from here instead of using the run's (fullChromiumPath, for browser notifications). */
  executablePath?: string;
  /** Switches for that browser of the file's own, e.g. a fake microphone's (test/browser/voice.test.ts). */
  args?: string[];
}

/**
 * Registers the hooks of one browser connection per test file: made before the first test, closed after the last.
 * After each test the pages are checked for uncaught errors and console errors (the test fails if any occurred),
 * then the pages, their contexts and the apps started through the harness are closed.
 */
export function useBrowser(harnessOptions: UseBrowserOptions = {}): BrowserHarness {
  let browser: Browser | undefined;
  let contexts: BrowserContext[] = [];
  let hearths: Hearth[] = [];
  let allowed: RegExp[] = [];
  let problems: PageProblems = { pageErrors: [], consoleErrors: [] };

  let launchError: unknown;
  beforeAll(async () => {
    try {
      const { executablePath, args } = harnessOptions;
      browser = executablePath === undefined ? await connectToRunsBrowser() : await launchBrowser(executablePath, args);
    } catch (error) {
      launchError = error;
    }
  }, 60_000);
  // Every test fails (not skips) when the browser could not be reached.
  beforeEach(() => {
    if (launchError) throw launchError;
  });

  afterAll(async () => {
    await browser?.close();
  }, 30_000);

  afterEach(async (context) => {
    // A failed test leaves a screenshot of each of its pages for the post-mortem.
    if (context.task.result?.state === 'fail') {
      const pages = contexts.flatMap((browserContext) => browserContext.pages()).filter((page) => !page.isClosed());
      await Promise.all(pages.map((page, index) => saveScreenshot(page, `failed-${context.task.name.slice(0, 80)}-${index}`).catch(() => undefined)));
    }
    const found = problems;
    problems = { pageErrors: [], consoleErrors: [] };
    const closingContexts = contexts;
    contexts = [];
    allowed = [];
    // Errors caused by the teardown itself (closing pages, then the apps) go to the next record and don't count.
    await Promise.all(closingContexts.map((context) => context.close().catch(() => undefined)));
    const closingHearths = hearths;
    hearths = [];
    await Promise.all(closingHearths.map((hearth) => hearth.close().catch(() => undefined)));
    const lines = [
      ...found.pageErrors.map((error) => `page error: ${error}`),
      ...found.consoleErrors.map((error) => `console error: ${error}`),
    ];
    if (lines.length > 0) throw new Error(`The page reported errors during the test:\n${lines.join('\n')}`);
  }, 30_000);

  const isAllowed = (text: string, extra: RegExp[]): boolean => [...allowed, ...extra].some((pattern) => pattern.test(text));

  return {
    get browser() {
      if (!browser) throw new Error('the browser is not connected (use the harness inside tests)');
      return browser;
    },
    async hearth(options = {}) {
      const hearth = closedOnce(await startHearth(options));
      hearths.push(hearth);
      return hearth;
    },
    async openPage(hearth, options = {}) {
      if (!browser) throw new Error('the browser is not connected');
      let context = options.context;
      if (!context) {
        context = await browser.newContext({
          viewport: options.viewport ?? { width: 1280, height: 800 },
          colorScheme: options.colorScheme ?? 'light',
          ...(options.permissions && { permissions: options.permissions }),
        });
        context.setDefaultTimeout(actionTimeoutMs);
        contexts.push(context);
      }
      const page = await context.newPage();
      const extra = options.allowErrors ?? [];
      // This test's record: errors of a page still open after the test can't leak into the next one.
      const sink = problems;
      page.on('pageerror', (error) => {
        sink.pageErrors.push(`${error.name}: ${error.message}\n${error.stack ?? ''}`);
        // An uncaught error fails the test anyway: closing the page ends its pending waits now instead of at their timeouts.
        if (failFast) void page.close().catch(() => undefined);
      });
      page.on('console', (message: ConsoleMessage) => {
        if (message.type() !== 'error') return;
        const location = message.location();
        const text = `${message.text()}${location.url ? ` (${location.url}:${location.lineNumber})` : ''}`;
        if (!isAllowed(text, extra)) sink.consoleErrors.push(text);
      });
      const url = `${hearth.baseUrl}/${options.hash !== undefined ? `#${options.hash}` : ''}`;
      await page.goto(url, { waitUntil: 'load' });
      return page;
    },
    async restartable() {
      const llm = await startScriptedOllama();
      const dataDir = await mkdtemp(path.join(tmpdir(), 'hearth-browser-restart-'));
      onTestFinished(async () => {
        await llm.close();
        await rm(dataDir, { recursive: true, force: true });
      });
      let port: number | undefined;
      return {
        llm,
        start: async (env = {}) => {
          const hearth = await this.hearth({ llm, dataDir, env, ...(port !== undefined && { port }) });
          port = Number(new URL(hearth.baseUrl).port);
          return hearth;
        },
      };
    },
    async openSession(hearth, profileId) {
      const sessionId = await hearth.createSession(profileId);
      const page = await this.openPage(hearth, { hash: sessionId });
      await waitForApp(page);
      return { page, sessionId };
    },
    allowErrors(pattern) {
      allowed.push(pattern);
    },
    problems: () => ({ pageErrors: [...problems.pageErrors], consoleErrors: [...problems.consoleErrors] }),
  };
}

/**
 * The pictures of passing tests are taken only when asked for (HEARTH_SCREENSHOTS=1): a full-page PNG
 * costs Chromium 0.06-0.12 CPU-s, and a run of test/browser takes about a hundred. A failed test's pages always are.
 */
const screenshotsWanted = process.env.HEARTH_SCREENSHOTS === '1';

/** With HEARTH_SCREENSHOTS=1, saves a full-page PNG to the git-ignored test-artifacts/ folder and answers its path. */
export async function screenshot(page: Page, name: string): Promise<string | undefined> {
  return screenshotsWanted ? saveScreenshot(page, name) : undefined;
}

async function saveScreenshot(page: Page, name: string): Promise<string> {
  await mkdir(artifactsDir, { recursive: true });
  const file = path.join(artifactsDir, `${name.replace(/[^\w.-]+/g, '-')}.png`);
  await page.screenshot({ path: file, fullPage: true });
  return file;
}

// ---- selectors of the page's stable hooks: aria-labels, and data-role / data-tool / data-status on transcript items ----

export const sel = {
  transcript: '#transcript',
  message: 'textarea[aria-label="Message"]',
  send: 'button[aria-label="Send"]',
  stop: 'button[aria-label="Stop"]',
  files: 'input[aria-label="Files to attach"]',
  user: '#transcript [data-role="user"]',
  assistant: '#transcript [data-role="assistant"]',
  tool: '#transcript [data-role="tool"]',
  plan: '#transcript [data-role="plan"]',
  error: '#transcript [data-role="error"]',
  /** The question (then the decision) inside the tool card of a call that asked the person; scope it to a card. */
  approval: '[data-role="approval"]',
  allowOnce: 'button[aria-label="Allow once"]',
  allowForSession: 'button[aria-label="Allow for this session"]',
  deny: 'button[aria-label="Deny"]',
  banner: '#connection-banner',
  sessionList: 'ul[aria-label="Session list"]',
  sessionItem: 'ul[aria-label="Session list"] li[data-session-id]',
  newSession: 'button[aria-label="New session"]',
  filter: 'input[aria-label="Filter sessions"]',
  sessionTitle: '#session-title',
  sessionProfile: '#session-profile',
  openSessions: 'button[aria-label="Open sessions"]',
  closeSessions: 'button[aria-label="Close sessions"]',
  signIn: 'form[aria-label="Sign in"]',
  accessToken: 'input[aria-label="Access token"]',
} as const;

/** The app's composer and transcript are on the page. */
export async function waitForApp(page: Page): Promise<void> {
  await page.locator(sel.message).waitFor({ state: 'visible' });
  await page.locator(sel.transcript).waitFor({ state: 'attached' });
}

/** Opens a side panel by its header button (`Context`, `Tools`, `Schedules`…) and gives it once it shows. */
export async function openPanel(page: Page, name: string): Promise<Locator> {
  await page.locator(`header button.panel-toggle[aria-label="${name}"]`).click();
  const panel = page.locator(`aside.panel[aria-label="${name}"]`);
  await panel.waitFor({ state: 'visible' });
  return panel;
}

/** Closes the open side panel `name` by its header button, as a second click does, and waits until it is gone. */
export async function closePanel(page: Page, name: string): Promise<void> {
  await page.locator(`header button.panel-toggle[aria-label="${name}"]`).click();
  await page.locator(`aside.panel[aria-label="${name}"]`).waitFor({ state: 'hidden' });
}

/**
 * Opens another session in the same page, through the address's hash as a session link does (no page load),
 * and waits until its socket is in step and the composer takes a message.
 */
export async function showSession(page: Page, sessionId: string): Promise<void> {
  await page.evaluate((id) => (location.hash = encodeURIComponent(id)), sessionId);
  await waitForSessionSynced(page, sessionId);
  await waitForIdle(page);
}

/** The session's socket is open and the page has drawn its history (the page's `hearthMetrics.lastOpen`). */
export async function waitForSessionSynced(page: Page, sessionId: string): Promise<void> {
  await page.waitForFunction((id) => (window as any).hearthMetrics?.lastOpen?.sessionId === id, sessionId);
}

/** The events socket has said hello: from now on its events (notifications, integration and tool changes) reach the page. */
export async function waitForEventsSocket(page: Page): Promise<void> {
  await page.locator('.session-header .backend-status:not([data-state="unknown"])').waitFor();
}

/** Types `text` into the message box and presses Enter. */
export async function sendMessage(page: Page, text: string): Promise<void> {
  const box = page.locator(sel.message);
  await box.waitFor({ state: 'visible' });
  await waitForMessageBoxEnabled(page);
  await box.fill(text);
  // Send is enabled once the page takes a message (a message sent while the session's socket opens waits for it).
  await page.locator(`${sel.send}:not([disabled])`).waitFor({ timeout: actionTimeoutMs });
  await box.press('Enter');
}

async function waitForMessageBoxEnabled(page: Page, timeout = actionTimeoutMs): Promise<void> {
  await page.waitForFunction((selector) => {
    const box = document.querySelector(selector) as HTMLTextAreaElement | null;
    return box !== null && !box.disabled;
  }, sel.message, { timeout });
}

/** The text of the rendered Markdown of the last assistant item, whitespace-normalised. */
export async function lastAnswerText(page: Page): Promise<string> {
  return page.evaluate((selector) => {
    const items = document.querySelectorAll(selector);
    const last = items[items.length - 1];
    const markdown = last?.querySelector('.markdown') ?? last;
    return (markdown?.textContent ?? '').replace(/\s+/g, ' ').trim();
  }, sel.assistant);
}

/** Waits until the last assistant item's Markdown text (whitespace-normalised) equals `expected`. */
export async function waitForAnswer(page: Page, expected: string, timeout = actionTimeoutMs): Promise<void> {
  const want = expected.replace(/\s+/g, ' ').trim();
  try {
    await page.waitForFunction(
      ({ selector, want }) => {
        const items = document.querySelectorAll(selector);
        const last = items[items.length - 1];
        const markdown = last?.querySelector('.markdown') ?? last;
        return (markdown?.textContent ?? '').replace(/\s+/g, ' ').trim() === want;
      },
      { selector: sel.assistant, want },
      { timeout, polling: 'raf' },
    );
  } catch (error) {
    const seen = await lastAnswerText(page).catch(() => '<page gone>');
    throw new Error(`The last answer never became ${JSON.stringify(want.slice(0, 200))}; it is ${JSON.stringify(seen.slice(0, 200))}\n${String(error)}`);
  }
}

/** Waits until the run is over from the page's point of view: Send is back and the textarea is enabled. */
export async function waitForIdle(page: Page, timeout = actionTimeoutMs): Promise<void> {
  await page.locator(sel.send).waitFor({ state: 'visible', timeout });
  await waitForMessageBoxEnabled(page, timeout);
}

/** Whether the element is visible and at least partly inside the viewport (an off-canvas drawer is not). */
export async function onScreen(locator: Locator): Promise<boolean> {
  if (!(await locator.isVisible())) return false;
  const box = await locator.boundingBox();
  const viewport = locator.page().viewportSize();
  if (!box || !viewport) return false;
  return box.x + box.width > 0 && box.y + box.height > 0 && box.x < viewport.width && box.y < viewport.height && box.width > 0 && box.height > 0;
}

/** Waits until the header's profile select shows `name` as the session's profile. */
export async function waitForHeaderProfile(page: Page, name: string): Promise<void> {
  try {
    await page.waitForFunction(
      ({ selector, name }) => (document.querySelector(selector) as HTMLSelectElement | null)?.selectedOptions[0]?.textContent === name,
      { selector: sel.sessionProfile, name },
    );
  } catch (error) {
    const shown = await page.locator(sel.sessionProfile).evaluate((select: HTMLSelectElement) => select.selectedOptions[0]?.textContent).catch(() => '<page gone>');
    throw new Error(`The header never showed the profile ${JSON.stringify(name)}; it shows ${JSON.stringify(shown)}\n${String(error)}`);
  }
}

/** Evaluates `window.hearthMetrics` (undefined when the client doesn't expose it). */
export async function hearthMetrics(page: Page): Promise<any> {
  return page.evaluate(() => (window as any).hearthMetrics && JSON.parse(JSON.stringify((window as any).hearthMetrics)));
}
