/// <reference lib="dom" />
// Issue 35 on the page: the shipped mcp.example.json's `files` server, its package fetched once
// into Hearth's npm cache (from a registry stand-in the person's ~/.npmrc names) and then run in
// its jail without network, shows as connected in the Tools panel; a write it asks about shows
// the path on the card, whole at 1366 px light and 390 px dark, and *Allow for this session*
// covers that path only.
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Locator } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it, onTestFinished, vi } from 'vitest';
import { packageRoot } from '../../src/package-root.ts';
import { browserTest, openPanel, sel, sendMessage, skipBrowserTests, useBrowser, waitForAnswer, waitForEventsSocket } from '../support/browser.ts';
import { expectNoViolations } from '../support/axe.ts';
import { npmRegistryStandIn, type NpmRegistryStandIn } from '../support/npm-registry-stand-in.ts';

let registry: NpmRegistryStandIn;
beforeAll(async () => {
  if (!skipBrowserTests) registry = await npmRegistryStandIn('@modelcontextprotocol/server-filesystem', packageRoot);
}, 60_000);
afterAll(async () => {
  await registry?.close();
});

const profile = `---\nid: mcp_user\nname: MCP user\nmax_iterations: 6\nplanning_enabled: false\ntools: [files__write_file]\napprovals:\n  default: allow\n  ask: [files__write_file]\n---\nYou use MCP tools.\n`;

/** The card's subject is shown whole: not cut, and inside the window. */
async function expectWholeSubject(approval: Locator, where: string): Promise<void> {
  const subject = approval.locator('.approval-subject');
  const fit = await subject.evaluate((node) => {
    const box = node.getBoundingClientRect();
    return { cut: node.scrollWidth > node.clientWidth + 0.5, inside: box.left >= 0 && box.right <= window.innerWidth + 0.5 };
  });
  expect(fit, where).toEqual({ cut: false, inside: true });
}

describe.skipIf(skipBrowserTests)('mcp.example.json on the page', () => {
  const browser = useBrowser();

  it('the example files server connects from the cache, and its write card shows the path Allow for this session covers', { ...browserTest, timeout: 150_000 }, async () => {
    const home = await mkdtemp(path.join(tmpdir(), 'hearth-browser-example-'));
    onTestFinished(() => rm(home, { recursive: true, force: true }));
    await writeFile(path.join(home, '.npmrc'), `registry=${registry.url}\n`);
    vi.stubEnv('HOME', home);
    const documents = path.join(home, 'Documents');
    const dataDir = path.join(home, 'data');
    await mkdir(documents);
    await mkdir(path.join(dataDir, 'profiles'), { recursive: true });
    await writeFile(path.join(dataDir, 'profiles', 'mcp_user.md'), profile);
    const example = await readFile(path.join(packageRoot, 'mcp.example.json'), 'utf8');
    const files = JSON.parse(example.replaceAll('/home/me/Documents', documents)).mcpServers.files;
    await writeFile(path.join(dataDir, 'mcp.json'), JSON.stringify({ mcpServers: { files } }));
    const hearth = await browser.hearth({ dataDir });

    const { page } = await browser.openSession(hearth, 'mcp_user');
    await page.setViewportSize({ width: 1366, height: 768 });
    await waitForEventsSocket(page);
    const tools = await openPanel(page, 'Tools');
    await tools.locator('section.mcp-server[data-mcp-server="files"][data-status="connected"]').waitFor({ timeout: 120_000 });
    expect(registry.requests.length).toBeGreaterThan(0);
    const requestsAtConnect = registry.requests.length;
    await page.locator('header button.panel-toggle[aria-label="Tools"]').click();
    await tools.waitFor({ state: 'hidden' });

    const notes = path.join(documents, 'notes.txt');
    const other = path.join(documents, 'other.txt');
    hearth.llm.script(
      { toolCalls: [{ name: 'files__write_file', arguments: { path: notes, content: 'water the plants' } }] },
      { toolCalls: [{ name: 'files__write_file', arguments: { path: notes, content: 'and the roses' } }] },
      { toolCalls: [{ name: 'files__write_file', arguments: { path: other, content: 'elsewhere' } }] },
      { content: 'Written.' },
    );
    await sendMessage(page, 'Write my notes');
    const first = page.locator(`${sel.tool}[data-tool="files__write_file"]`).nth(0).locator(sel.approval);
    await first.waitFor();
    expect(await first.locator('.approval-subject').textContent()).toBe(`path=${notes}`);
    await expectWholeSubject(first, '1366 px, light');
    await expectNoViolations(page, 'an MCP write card at 1366 px, light');
    await page.setViewportSize({ width: 390, height: 844 });
    await page.emulateMedia({ colorScheme: 'dark' });
    await page.waitForFunction(() => window.innerWidth === 390 && matchMedia('(prefers-color-scheme: dark)').matches);
    await expectWholeSubject(first, '390 px, dark');
    await first.locator('button[aria-label="Allow for this session"]').click();

    // The same path again runs unasked; another path asks again.
    const third = page.locator(`${sel.tool}[data-tool="files__write_file"]`).nth(2).locator(sel.approval);
    await third.waitFor();
    expect(await third.locator('.approval-subject').textContent()).toBe(`path=${other}`);
    await expectWholeSubject(third, '390 px, dark');
    await expectNoViolations(page, 'an MCP write card at 390 px, dark');
    expect(await page.locator(`${sel.tool}[data-tool="files__write_file"]`).nth(1).locator(sel.approval).count()).toBe(0);
    await third.locator('button[aria-label="Deny"]').click();
    await waitForAnswer(page, 'Written.');
    expect(await readFile(notes, 'utf8')).toBe('and the roses');
    await expect(readFile(other, 'utf8')).rejects.toThrow();
    // The jail has no network and npx ran offline: the registry heard nothing after the preparation.
    expect(registry.requests.length).toBe(requestsAtConnect);
  });
});
