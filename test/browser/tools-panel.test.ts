/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
// The Tools panel (issue 15): the open session's profile's tools first, the rest marked as not
// available in it; each user tool with its file, status, error and an on/off switch.
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import type { Hearth } from '../support/hearth-server.ts';
import { browserTest, screenshot, skipBrowserTests, useBrowser } from '../support/browser.ts';

async function openToolsPanel(page: Page) {
  await page.locator('header button.panel-toggle[aria-label="Tools"]').click();
  const panel = page.locator('aside.panel[aria-label="Tools"]');
  await panel.waitFor({ state: 'visible' });
  return panel;
}

async function userTool(hearth: Hearth, name: string) {
  const { body } = await hearth.request('GET', '/agents/tools');
  return body.tools.find((tool: { name: string; source: string }) => tool.source === 'user' && tool.name === name);
}

describe.skipIf(skipBrowserTests)('the Tools panel', () => {
  const browser = useBrowser();

  it('lists the session profile\'s tools first, shows a broken user tool\'s error, and switches a tool off', browserTest, async () => {
    const hearth = await browser.hearth();
    await writeFile(
      path.join(hearth.config.TOOLS_DIR, 'coin_toss.ts'),
      `export const name = 'coin_toss';
export const description = 'Tosses a coin.';
export const parameters = { type: 'object', properties: {}, required: [] };
export async function execute() { return Math.random() < 0.5 ? 'heads' : 'tails'; }
`,
    );
    await writeFile(path.join(hearth.config.TOOLS_DIR, 'broken_tool.ts'), "export const name = 'broken_tool';\nexport const description = ;\n");
    await hearth.deps.userTools.reload();
    const { body: profiles } = await hearth.request('GET', '/agents/profiles');
    const smartHome = profiles.profiles.find((profile: { id: string }) => profile.id === 'smart_home');
    expect(smartHome.enabled_tools).toContain('coin_toss');
    expect(smartHome.enabled_tools).not.toContain('ssh_exec');

    const { page } = await browser.openSession(hearth, 'smart_home');
    const panel = await openToolsPanel(page);
    const inProfile = panel.locator('[data-tool-group="in-profile"] li[data-tool-name]');
    await panel.locator('[data-tool-group="in-profile"] li[data-tool-name="coin_toss"]').waitFor();

    // The profile's tools, in its order, come before every other tool, each marked as in it.
    const names = await panel.locator('li[data-tool-name]').evaluateAll((items) => items.map((item) => (item as HTMLElement).dataset.toolName));
    expect(names.slice(0, smartHome.enabled_tools.length)).toEqual(smartHome.enabled_tools);
    expect(await inProfile.evaluateAll((items) => items.every((item) => (item as HTMLElement).dataset.inProfile === 'true'))).toBe(true);
    const outside = panel.locator('[data-tool-group="not-in-profile"] li[data-tool-name="ssh_exec"]');
    expect(await outside.getAttribute('data-in-profile')).toBe('false');
    expect(await outside.textContent()).toContain('Not available in this profile');

    // A user tool shows its file and status; a broken one its error.
    const coin = panel.locator('li[data-tool-name="coin_toss"]');
    expect(await coin.getAttribute('data-status')).toBe('loaded');
    expect(await coin.locator('.tool-meta').first().textContent()).toContain('coin_toss.ts');
    const broken = panel.locator('[data-tool-group="not-in-profile"] li[data-tool-name="broken_tool"]');
    expect(await broken.getAttribute('data-status')).toBe('failed');
    expect(await broken.locator('.tool-meta').first().textContent()).toContain('broken_tool.ts');
    expect(await broken.locator('.tool-error').textContent()).toMatch(/Does not compile/);
    await screenshot(page, 'tools-panel-profile');

    // The switch turns it off for every profile: the panel moves it out of the profile and the server agrees.
    const toggle = coin.locator('input[role="switch"]');
    expect(await toggle.isChecked()).toBe(true);
    await toggle.click();
    await panel.locator('[data-tool-group="not-in-profile"] li[data-tool-name="coin_toss"][data-status="disabled"]').waitFor();
    expect(await panel.locator('li[data-tool-name="coin_toss"] input[role="switch"]').isChecked()).toBe(false);
    expect(await userTool(hearth, 'coin_toss')).toMatchObject({ enabled: false, status: 'disabled' });
    const { body: after } = await hearth.request('GET', '/agents/profiles');
    expect(after.profiles.find((profile: { id: string }) => profile.id === 'smart_home').enabled_tools).not.toContain('coin_toss');

    // And on again.
    await panel.locator('li[data-tool-name="coin_toss"] input[role="switch"]').click();
    await panel.locator('[data-tool-group="in-profile"] li[data-tool-name="coin_toss"][data-status="loaded"]').waitFor();
    expect(await userTool(hearth, 'coin_toss')).toMatchObject({ enabled: true, status: 'loaded' });
  });
});
