/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
// The profile the page offers first, for a new session and for a new schedule, is the default
// profile even when another one comes first; the person's choice in the header's profile select
// (the page's one, issue 35) is remembered in the browser as the last used, and the select's
// tooltip is the chosen profile's description.
import { describe, expect, it } from 'vitest';
import { browserTest, sel, skipBrowserTests, useBrowser, waitForApp } from '../support/browser.ts';
import { chooseInHeader } from '../support/session-header.ts';

const firstInListProfile = `---
id: aardvark
name: Aardvark
description: Comes first in every list.
temperature: 0.1
max_iterations: 3
tools: []
---
You answer briefly.
`;

describe.skipIf(skipBrowserTests)('the profile offered first', () => {
  const browser = useBrowser();

  it('is the default profile for a new session and a new schedule, until the person chooses another, which is remembered', browserTest, async () => {
    const hearth = await browser.hearth({ profiles: { aardvark: firstInListProfile } });
    const { profiles } = (await hearth.request('GET', '/agents/profiles')).body as { profiles: { id: string; description: string }[] };
    const descriptionOf = (id: string) => profiles.find((profile) => profile.id === id)!.description;
    const page = await browser.openPage(hearth);
    await waitForApp(page);
    const select = page.locator(sel.sessionProfile);
    await select.locator('option[value="aardvark"]').waitFor({ state: 'attached' });
    expect(await select.locator('option').first().getAttribute('value')).toBe('aardvark');
    expect(await select.inputValue()).toBe('secretary');
    expect(await select.getAttribute('title')).toBe(descriptionOf('secretary'));

    await page.locator('header button.panel-toggle[aria-label="Schedules"]').click();
    const formProfile = page.locator('aside.panel[aria-label="Schedules"] form.schedule-form select[name="profile_id"]');
    await formProfile.waitFor();
    expect(await formProfile.inputValue()).toBe('secretary');

    await chooseInHeader(page, sel.sessionProfile, 'server_admin');
    expect(await select.getAttribute('title')).toBe(descriptionOf('server_admin'));
    await page.reload();
    await waitForApp(page);
    await select.locator('option[value="server_admin"]').waitFor({ state: 'attached' });
    expect(await select.inputValue()).toBe('server_admin');
    expect(await select.getAttribute('title')).toBe(descriptionOf('server_admin'));
  });
});
