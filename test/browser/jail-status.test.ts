/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { probeJail } from '../../src/jail/jail.ts';
import { browserTest, skipBrowserTests, useBrowser, waitForApp } from '../support/browser.ts';

const banner = '#jail-banner';
const jailRuns = (await probeJail()).status.state === 'on';

describe.skipIf(skipBrowserTests)('the jail in the page', () => {
  const browser = useBrowser();
  let pathWithoutBubblewrap: string;

  beforeAll(async () => {
    // An empty folder as the whole PATH the jail looks for bwrap in: a machine without the package.
    pathWithoutBubblewrap = await mkdtemp(path.join(tmpdir(), 'hearth-no-bwrap-'));
  });
  afterAll(() => rm(pathWithoutBubblewrap, { recursive: true, force: true }));

  it('without bubblewrap on PATH, /health says why, what is off and the fix, and the page shows the same', browserTest, async () => {
    const hearth = await browser.hearth({ jailEnvironment: { PATH: pathWithoutBubblewrap } });
    const health = await hearth.request('GET', '/health');
    expect(health.body.jail).toEqual({
      state: 'unavailable',
      reason: expect.stringContaining('bubblewrap (bwrap) is not installed'),
      off: ['terminal', 'code_exec', 'user tools', 'stdio MCP servers'],
      fix: 'sudo apt install bubblewrap passt',
    });
    const page = await browser.openPage(hearth);
    await waitForApp(page);
    await page.locator(banner).waitFor();
    expect(await page.locator(banner).textContent()).toBe(
      `The jail is unavailable: ${health.body.jail.reason}. Off until it works: terminal, code_exec, user tools, stdio MCP servers. Fix: sudo apt install bubblewrap passt`,
    );
    expect(await page.locator(`${banner} code`).textContent()).toBe('sudo apt install bubblewrap passt');
    expect(await page.locator(banner).getAttribute('role')).toBe('alert');
  });

  it('with JAIL=off the page says so, quietly', browserTest, async () => {
    const hearth = await browser.hearth({ env: { JAIL: 'off' } });
    expect((await hearth.request('GET', '/health')).body.jail.state).toBe('off');
    const page = await browser.openPage(hearth);
    await waitForApp(page);
    await page.locator(banner).waitFor();
    expect(await page.locator(banner).textContent()).toBe("JAIL=off: the agent's processes run unjailed.");
    expect(await page.locator(banner).getAttribute('role')).toBe('status');
  });

  it.skipIf(!jailRuns)('with a working jail there is no banner', browserTest, async () => {
    const hearth = await browser.hearth();
    expect((await hearth.request('GET', '/health')).body.jail.state).toBe('on');
    const page = await browser.openPage(hearth);
    await waitForApp(page);
    await page.locator(`${banner}[data-state="on"]`).waitFor({ state: 'attached' });
    expect(await page.locator(banner).isHidden()).toBe(true);
    expect(await page.locator(banner).textContent()).toBe('');
  });
});
