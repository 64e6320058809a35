/// <reference lib="dom" />
// Scenario 13: the web page in Debian's Chromium against the bench server: opening a stored
// 2,000-message session, and drawing a 10,000-delta answer while it streams.
import { existsSync } from 'node:fs';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { fullChromiumPath, launchBrowser } from '../../test/support/chromium.ts';
import { createSession } from '../hearth-client.ts';
import type { ScenarioResult } from '../report.ts';
import { seedLongSession } from '../seed-session.ts';
import { maximum, median, milliseconds, thousands } from '../statistics.ts';
import type { BenchContext } from './bench-context.ts';

const openRuns = 5;
const streamRuns = 3;
const deltaCount = 10_000;
const openScenario = '13a. Page: open a 2,000-message session';
const streamScenario = '13b. Page: draw a 10,000-delta answer';

/** What the page exposes as window.hearthMetrics (public/app/metrics.js). */
interface PageMetrics {
  renders: number;
  frames: number;
  eventsReceived: number;
  lastEventAt: number;
  lastRenderAt: number;
  lastAppliedAt: number;
  longestRenderMs: number;
  longestApplyMs: number;
  lastOpen: { sessionId: string; messages: number; startedAt: number; ms: number; allDrawnMs?: number } | null;
}

const readMetrics = (page: Page): Promise<PageMetrics> => page.evaluate(() => JSON.parse(JSON.stringify((window as any).hearthMetrics)));

async function newContext(browser: Browser, { baseUrl, headers }: BenchContext['server']): Promise<BrowserContext> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  const token = /^Bearer (.+)$/.exec(headers.authorization ?? '')?.[1];
  if (token) await context.addCookies([{ name: 'token', value: token, url: baseUrl, sameSite: 'Strict' }]);
  return context;
}

interface OpenRun {
  firstScreenMs: number;
  allDrawnMs: number;
  navigationToFirstScreenMs: number;
  messages: number;
}

/** A fresh page on /#<id>: the page's own figures (from the hash being read) and the navigation's (modules included). */
async function openOnce(browser: Browser, context: BenchContext, sessionId: string): Promise<OpenRun> {
  const browserContext = await newContext(browser, context.server);
  try {
    const page = await browserContext.newPage();
    await page.goto(`${context.server.baseUrl}/#${sessionId}`);
    await page.waitForFunction((id) => {
      const open = (window as any).hearthMetrics?.lastOpen;
      return open?.sessionId === id && open.allDrawnMs !== undefined;
    }, sessionId);
    const { lastOpen } = await readMetrics(page);
    return {
      firstScreenMs: lastOpen!.ms,
      allDrawnMs: lastOpen!.allDrawnMs!,
      navigationToFirstScreenMs: lastOpen!.startedAt + lastOpen!.ms,
      messages: lastOpen!.messages,
    };
  } finally {
    await browserContext.close();
  }
}

interface StreamRun {
  eventsReceived: number;
  renders: number;
  frames: number;
  /** From the last event's arrival to its drawing into the DOM being done (the final text, rendered whole). */
  finalTextLagMs: number;
  longestRenderMs: number;
  longestApplyMs: number;
  sendToFinalMs: number;
  textMatches: boolean;
}

async function streamOnce(page: Page, context: BenchContext): Promise<StreamRun> {
  const sessionId = await createSession(context.server);
  await page.evaluate((id) => (location.hash = `#${id}`), sessionId);
  await page.locator('button[aria-label="Send"]:not([disabled])').waitFor();
  await page.evaluate(() => {
    const metrics = (window as any).hearthMetrics;
    metrics.longestRenderMs = 0;
    metrics.longestApplyMs = 0;
  });
  const before = await readMetrics(page);
  const box = page.locator('textarea[aria-label="Message"]');
  await box.fill('Stream as fast as you can');
  const sentAt = await page.evaluate(() => performance.now());
  await box.press('Enter');
  await page.locator('button[aria-label="Stop"]').waitFor();
  await page.locator('button[aria-label="Send"]').waitFor({ timeout: 120_000 });
  const after = await readMetrics(page);
  const shown = await page.evaluate(() => [...document.querySelectorAll('#transcript [data-role="assistant"] .markdown')].at(-1)?.textContent ?? '');
  const stored = await fetch(`${context.server.baseUrl}/sessions/${sessionId}`, { headers: context.server.headers }).then((response) => response.json());
  const answer = (stored as { messages: { role: string; content: string }[] }).messages.at(-1)?.content ?? '';
  const normalise = (text: string) => text.replace(/\s+/g, ' ').trim();
  return {
    eventsReceived: after.eventsReceived - before.eventsReceived,
    renders: after.renders - before.renders,
    frames: after.frames - before.frames,
    finalTextLagMs: after.lastAppliedAt - after.lastEventAt,
    longestRenderMs: after.longestRenderMs,
    longestApplyMs: after.longestApplyMs,
    sendToFinalMs: after.lastAppliedAt - sentAt,
    textMatches: answer !== '' && normalise(shown) === normalise(answer),
  };
}

export async function pageInChromium(context: BenchContext, databaseFile: string): Promise<ScenarioResult> {
  if (!existsSync(fullChromiumPath)) {
    const measured = `not run: no Chromium at ${fullChromiumPath} (apt-get install chromium)`;
    return { rows: [openScenario, streamScenario].map((scenario) => ({ scenario, measured, target: '', passed: undefined })), details: [] };
  }
  const browser = await launchBrowser(fullChromiumPath);
  try {
    const { sessionId } = await seedLongSession(databaseFile, 1_000);
    await openOnce(browser, context, sessionId);
    const opens: OpenRun[] = [];
    for (let run = 0; run < openRuns; run++) opens.push(await openOnce(browser, context, sessionId));

    await context.llm.configure({ chunkCount: deltaCount, delayMs: 0, stamped: false });
    const browserContext = await newContext(browser, context.server);
    const page = await browserContext.newPage();
    await page.goto(`${context.server.baseUrl}/`);
    await streamOnce(page, context);
    const streams: StreamRun[] = [];
    for (let run = 0; run < streamRuns; run++) streams.push(await streamOnce(page, context));
    await browserContext.close();

    const firstScreen = median(opens.map((run) => run.firstScreenMs));
    const allDrawn = median(opens.map((run) => run.allDrawnMs));
    const lag = median(streams.map((run) => run.finalTextLagMs));
    const everyFrameOnce = streams.every((run) => run.renders <= run.frames);
    const complete = streams.every((run) => run.textMatches && run.eventsReceived >= deltaCount);
    return {
      rows: [
        {
          scenario: openScenario,
          measured:
            `first screen median ${milliseconds(firstScreen)} (max ${milliseconds(maximum(opens.map((run) => run.firstScreenMs)))}), ` +
            `all ${thousands(opens[0]!.messages)} messages drawn median ${milliseconds(allDrawn)}; ` +
            `navigation → first screen median ${milliseconds(median(opens.map((run) => run.navigationToFirstScreenMs)))}; ${openRuns} fresh pages`,
          target: '< 1,000 ms',
          passed: allDrawn < 1_000,
        },
        {
          scenario: streamScenario,
          measured:
            `final text drawn ${milliseconds(lag)} after the last event (median of ${streamRuns}); ` +
            `longest frame render ${milliseconds(maximum(streams.map((run) => run.longestRenderMs)))}, longest event ${milliseconds(maximum(streams.map((run) => run.longestApplyMs)))}; ` +
            `renders/frames ${streams.map((run) => `${run.renders}/${run.frames}`).join(', ')}; ` +
            `send → final ${streams.map((run) => milliseconds(run.sendToFinalMs, 0)).join(' / ')}` +
            (complete ? '' : '; TEXT MISMATCH or events missing'),
          target: '≤ 1 render a frame; final text < 100 ms after the last event',
          passed: everyFrameOnce && complete && lag < 100,
        },
      ],
      details: [
        `Scenario 13 drives ${fullChromiumPath} (headless, via playwright-core) against the bench server. 13a: a fresh page on /#<id> of a session seeded with 2,000 messages; ` +
          '"first screen" is from the page reading the hash to the newest 60 entries drawn (GET /sessions/:id included), "all drawn" until the older ones, drawn ' +
          'above them in slices of 10 ms between yields to the browser, are all in the DOM. 13b: one page sends a message answered by 10,000 one-word chunks; the page\'s own counters ' +
          '(window.hearthMetrics) give renders against animation frames while the run streamed, the longest single render and event, and the time from the last ' +
          'event\'s arrival (stream_end) to its handling being done, which includes rendering the whole answer once; the text drawn is compared with the stored answer.',
      ],
    };
  } finally {
    await browser.close();
  }
}
