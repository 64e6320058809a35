/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
// The page in a household (docs/people.md): two people in two browser contexts on one Hearth each
// see only their own sessions and facts; a child's server_admin ask waits for the adults, shows in
// the adult's page, who allows it, while the child's page has no buttons and a forged decision frame
// from it is refused; signing in and out; the owner's People panel inviting someone who joins.
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { signInCookie } from '../../src/server/identify.ts';
import { appendMessage } from '../../src/store/messages-repository.ts';
import { expectNoViolations } from '../support/axe.ts';
import { actionTimeoutMs, closePanel, openPanel, screenshot, sel, sendMessage, showSession, skipBrowserTests, useBrowser, waitForAnswer, waitForApp, waitForEventsSocket } from '../support/browser.ts';
import type { Hearth } from '../support/hearth-server.ts';
import { checkHeader, headerViewports, measureHeader } from '../support/header-layout.ts';
import { household, type SignedIn } from '../support/people.ts';

/** The shipped server_admin, as an owner who lets children use it (its adults deciding their asks) would edit it. */
const serverAdminForChildren = readFileSync(path.resolve('profiles/server_admin.md'), 'utf8')
  .replace(/^people: .*$/m, 'people: [owner, adult, child]')
  .replace(/^approvers: .*$/m, 'approvers: [owner, adult]')
  .replace(/^planning_enabled: true$/m, 'planning_enabled: false');

const signInForm = sel.signIn;
// Its name comes with /me, after the app shows: read it with expect.poll.
const personButton = '#person-button';

/** Signs in through the page's form with a name and passphrase. */
async function signInOnPage(page: Page, name: string, passphrase: string): Promise<void> {
  const form = page.locator(signInForm);
  await form.waitFor({ state: 'visible' });
  await form.getByLabel('Name').fill(name);
  await form.getByLabel('Passphrase').fill(passphrase);
  await form.getByRole('button', { name: 'Sign in' }).click();
  await form.waitFor({ state: 'hidden' });
  await waitForApp(page);
}

/** Opens the page in a context of its own and signs `who` in through the form. */
async function pageOf(browser: ReturnType<typeof useBrowser>, hearth: Hearth, who: SignedIn, hash?: string, colorScheme: 'light' | 'dark' = 'light'): Promise<Page> {
  // A context of its own (its own cookies), as another device would be.
  const page = await browser.openPage(hearth, { ...(hash !== undefined && { hash }), colorScheme, allowErrors: [/\b401\b/] });
  await signInOnPage(page, who.person.name, who.passphrase);
  return page;
}

/** A message in a session's history (the list shows sessions that have one). */
async function said(hearth: Hearth, sessionId: string, content: string): Promise<void> {
  await appendMessage(hearth.deps.db, sessionId, { role: 'user', content });
}

async function sessionTitles(page: Page): Promise<string[]> {
  return page.locator(`${sel.sessionItem} .session-title`).allTextContents();
}

/** Adds a passkey from the account menu on http://localhost and signs in with it after signing out. */
async function addAPasskeyAndSignInWithIt(browser: ReturnType<typeof useBrowser>, hearth: Hearth, adult: SignedIn): Promise<void> {
  // Browsers offer passkeys to a secure page and never for an IP address: the page is opened as localhost.
  const localhost = { ...hearth, baseUrl: hearth.baseUrl.replace('127.0.0.1', 'localhost') };
  const page = await browser.openPage(localhost, { allowErrors: [/\b401\b/] });
  const cdp = await page.context().newCDPSession(page);
  await cdp.send('WebAuthn.enable');
  await cdp.send('WebAuthn.addVirtualAuthenticator', {
    options: { protocol: 'ctap2', transport: 'internal', hasResidentKey: true, hasUserVerification: true, isUserVerified: true, automaticPresenceSimulation: true },
  });
  await signInOnPage(page, adult.person.name, adult.passphrase);

  await page.locator(personButton).click();
  const menu = page.locator('#person-menu');
  await menu.getByLabel('Passkey name').fill('Test laptop');
  await menu.getByRole('button', { name: 'Add a passkey' }).click();
  await menu.locator('[data-passkey-id]', { hasText: 'Test laptop' }).waitFor();
  expect((await adult.request('GET', '/me/passkeys')).body).toEqual([expect.objectContaining({ name: 'Test laptop' })]);

  await menu.getByRole('button', { name: 'Sign out', exact: true }).click();
  const form = page.locator(signInForm);
  await form.waitFor({ state: 'visible' });
  await form.getByRole('button', { name: 'Use a passkey instead' }).click();
  await form.waitFor({ state: 'hidden' });
  await waitForApp(page);
  await expect.poll(() => page.locator(personButton).textContent(), { timeout: actionTimeoutMs }).toBe(adult.person.name);
}

/** A guest's page says guests keep no memory and offers no Telegram link nor personal token. */
async function expectAGuestsPage(page: Page): Promise<void> {
  const memory = await openPanel(page, 'Memory');
  await memory.locator('.memory-summary').waitFor();
  expect(await memory.locator('.memory-summary').textContent()).toContain('Guests keep no memory');
  await page.locator(personButton).click();
  const menu = page.locator('#person-menu');
  await menu.getByRole('button', { name: 'Sign out', exact: true }).waitFor();
  expect(await menu.locator('section[aria-label="Telegram"]').count()).toBe(0);
  expect(await menu.locator('section[aria-label="Personal API tokens"]').count()).toBe(0);
  expect(await page.locator('#people-toggle').isVisible()).toBe(false);
}

describe.skipIf(skipBrowserTests)('the page in a household', () => {
  const browser = useBrowser();

  it("two people each see only their own sessions and facts; the child's server_admin ask is decided by the adult, never from the child's page; then a session shared on purpose: the other sees it with whose it is, cannot change it, and loses it when unshared; the header keeps one row", { timeout: 150_000 }, async () => {
    const hearth = await browser.hearth({ profiles: { server_admin: serverAdminForChildren } });
    const { owner, people } = await household(hearth, ['adult', 'child']);
    const [adult, child] = people;
    const adultSession = await adult.createSession('secretary');
    await adult.request('PATCH', `/sessions/${adultSession}`, { title: 'Tax return' });
    await said(hearth, adultSession, 'When is the tax return due?');
    await adult.request('PUT', '/memory/facts', { category: 'work', key: 'employer', value: 'the harbour office' });
    const childSession = await child.createSession('server_admin');
    await child.request('PATCH', `/sessions/${childSession}`, { title: 'Minecraft server' });
    await said(hearth, childSession, 'Is the Minecraft server up?');
    await child.request('PUT', '/memory/facts', { category: 'school', key: 'class', value: 'year five' });

    // The adult's page: their session and their fact only.
    // In dark colours: the axe checks below cover both schemes between the two pages.
    const adultPage = await pageOf(browser, hearth, adult, undefined, 'dark');
    await adultPage.locator(sel.sessionItem).first().waitFor();
    expect(await sessionTitles(adultPage)).toEqual(['Tax return']);
    await expect.poll(() => adultPage.locator(personButton).textContent(), { timeout: actionTimeoutMs }).toBe(adult.person.name);
    const adultMemory = await openPanel(adultPage, 'Memory');
    await adultMemory.locator('[data-fact-id]').first().waitFor();
    expect(await adultMemory.textContent()).toContain('the harbour office');
    expect(await adultMemory.textContent()).not.toContain('year five');
    // No People entry: only the owner manages the household.
    expect(await adultPage.locator('#people-toggle').isVisible()).toBe(false);
    await waitForEventsSocket(adultPage);

    // The child's page, opened on their server_admin session: theirs only too.
    const childPage = await pageOf(browser, hearth, child, childSession);
    // The adult's deliberate look at the child's session below answers 404 in the console.
    browser.allowErrors(new RegExp(`\\b404\\b.*/sessions/${childSession}`));
    await childPage.locator(sel.sessionItem).first().waitFor();
    expect(await sessionTitles(childPage)).toEqual(['Minecraft server']);
    const childMemory = await openPanel(childPage, 'Memory');
    await childMemory.locator('[data-fact-id]').first().waitFor();
    expect(await childMemory.textContent()).toContain('year five');
    expect(await childMemory.textContent()).not.toContain('the harbour office');
    // Another's session by its address is as missing as one that never was.
    const peek = await adultPage.evaluate(async (id) => (await fetch(`/sessions/${id}`)).status, childSession);
    expect(peek).toBe(404);

    // The child asks for a command that writes: the card waits for the adults, without buttons.
    hearth.llm.script({ toolCalls: [{ name: 'terminal', arguments: { command: 'touch world.txt' } }] }, { content: 'The world file is made.' });
    await sendMessage(childPage, 'Make the world file');
    const childCard = childPage.locator(`${sel.tool}[data-tool="terminal"] ${sel.approval}`);
    await childCard.waitFor();
    expect(await childCard.getAttribute('data-can-decide')).toBe('false');
    const question = (await childCard.locator('.approval-question').textContent()) ?? '';
    expect(question).toContain(adult.person.name);
    expect(question).toContain(owner.person.name);
    expect(await childCard.locator('button').count()).toBe(0);
    expect(await childPage.locator('#asks-for-you').isVisible()).toBe(false);
    await screenshot(childPage, 'household-child-waiting');
    await expectNoViolations(childPage, "the child's own ask, waiting for the adults");

    // A decision frame forged from the child's page, on the session's own socket, is refused and decides nothing.
    const callId = (await childCard.getAttribute('data-call-id'))!;
    const forged = await childPage.evaluate(
      ({ sessionId, callId }) =>
        new Promise<any>((resolve, reject) => {
          const socket = new WebSocket(`${location.origin.replace('http', 'ws')}/ws/sessions/${encodeURIComponent(sessionId)}`);
          socket.onopen = () => socket.send(JSON.stringify({ type: 'approve', call_id: callId, decision: 'allow' }));
          socket.onmessage = (message) => {
            const event = JSON.parse(message.data);
            if (event.type !== 'error') return;
            socket.close();
            resolve(event);
          };
          socket.onclose = (closed) => reject(new Error(`closed ${closed.code} before an answer`));
        }),
      { sessionId: childSession, callId },
    );
    expect(forged).toMatchObject({ type: 'error', code: 'forbidden' });
    expect(forged.message).toContain(adult.person.name);
    const workFile = path.join(hearth.config.SESSION_FILES_DIR, childSession, 'world.txt');
    expect(existsSync(workFile)).toBe(false);
    expect(await childCard.getAttribute('data-state')).toBe('waiting');

    // The adult's page shows the child's ask above the conversation, and the adult allows it.
    const ask = adultPage.locator(`#asks-for-you .ask-for-you[data-call-id="${callId}"]`);
    await ask.waitFor();
    expect(await ask.locator('.approval-question').textContent()).toBe(`${child.person.name} asks to run terminal:`);
    expect(await ask.locator('.approval-subject').textContent()).toBe('touch world.txt');
    await screenshot(adultPage, 'household-adult-asked');
    await expectNoViolations(adultPage, "the child's ask on the adult's page");
    await ask.locator(sel.allowOnce).click();
    await ask.waitFor({ state: 'detached' });
    expect(await adultPage.locator('#asks-for-you').isVisible()).toBe(false);

    // The child's card says who allowed it, and the run goes on.
    await childCard.locator('.approval-outcome:not(:empty)').waitFor();
    expect(await childCard.locator('.approval-outcome').textContent()).toBe(`Allowed by ${adult.person.name}`);
    await waitForAnswer(childPage, 'The world file is made.');
    expect(existsSync(workFile)).toBe(true);
    const audit = (await child.request('GET', `/approvals?status=all&session_id=${childSession}`)).body.approvals[0];
    // Decided in the adult's page (its asks for you, over REST), and recorded so.
    expect(audit).toMatchObject({ asked_by: { id: child.person.id }, decider: { id: adult.person.id }, via: 'page' });
    // Through it all, the adult's list never showed the child's session.
    expect(await sessionTitles(adultPage)).toEqual(['Tax return']);

    // A session shared on purpose, in the same two pages (their Memory panels closed, as a fresh page has them).
    await closePanel(adultPage, 'Memory');
    await closePanel(childPage, 'Memory');
    const shopping = await adult.createSession('secretary');
    await adult.request('PATCH', `/sessions/${shopping}`, { title: 'Shopping list for the weekend' });
    await said(hearth, shopping, 'Milk, eggs, bread');
    await showSession(adultPage, shopping);
    await waitForEventsSocket(childPage);
    // The child's list has the child's own session only.
    expect(await sessionTitles(childPage)).toEqual(['Minecraft server']);

    // The adult shares it from the session list.
    const entry = adultPage.locator(`${sel.sessionItem}[data-session-id="${shopping}"]`);
    await entry.hover();
    await entry.getByRole('button', { name: 'Share with the household' }).click();
    await entry.locator('[data-role="shared"]').waitFor();
    expect(await entry.locator('[data-role="shared"]').textContent()).toBe('Shared');
    await adultPage.locator('#session-shared:not([hidden])').waitFor();
    expect(await adultPage.locator('#session-shared').textContent()).toBe('Shared with the household');

    // The child's list gains it, saying whose it is; its header says so; the child may not rename, share or delete it.
    const shared = childPage.locator(`${sel.sessionItem}[data-session-id="${shopping}"]`);
    await shared.waitFor();
    expect(await shared.locator('[data-role="shared"]').textContent()).toBe(`${adult.person.name}’s, shared`);
    expect(await shared.locator('.session-actions button').count()).toBe(0);
    await shared.locator('.session-link').click();
    await childPage.locator('#session-shared:not([hidden])').waitFor();
    expect(await childPage.locator('#session-shared').textContent()).toBe(`${adult.person.name}’s, shared with the household`);
    // Its profile is the adult's to switch, not the child's.
    await childPage.locator(`${sel.send}:not([disabled])`).waitFor();
    expect(await childPage.locator(sel.sessionProfile).isDisabled()).toBe(true);
    expect(await adultPage.locator(sel.sessionProfile).isDisabled()).toBe(false);
    await expectNoViolations(childPage, "someone else's shared session");

    // With the name in the header and a shared session open, the header keeps its one row at each width.
    for (const viewport of headerViewports) {
      await childPage.setViewportSize(viewport);
      await childPage.waitForFunction((width) => window.innerWidth === width, viewport.width);
      checkHeader(await measureHeader(childPage), viewport.width, 'a household, a shared session open');
    }

    // Unshared, it is the adult's alone again: the child's page, read again, no longer lists or opens it.
    // (The server tells only those who still see a session of its changes, so the child's open page learns it on reading again.)
    await entry.hover();
    await entry.getByRole('button', { name: 'Stop sharing' }).click();
    await entry.locator('[data-role="shared"]').waitFor({ state: 'detached' });
    expect(await adultPage.locator('#session-shared').isVisible()).toBe(false);
    browser.allowErrors(new RegExp(`\\b404\\b.*/sessions/${shopping}|WebSocket connection to .*/ws/sessions/${shopping}`));
    await childPage.reload();
    await waitForApp(childPage);
    await childPage.locator(`${sel.transcript}:has-text("This session no longer exists.")`).waitFor();
    expect(await sessionTitles(childPage)).toEqual(['Minecraft server']);
  });

  // One household and server for the account flows, which each sign in through a page of their own
  // (the passkey's at localhost), the guest on the page the adult signed out of.
  it('adds a passkey from the account menu on http://localhost and signs in with it after signing out; signs in with a name and passphrase, refuses a wrong one; the account menu changes the passphrase, makes and revokes a token, gives a Telegram code; signing out leaves the cookie useless; a guest\'s page says guests keep no memory and offers no Telegram link nor personal token', { timeout: 120_000 }, async () => {
    const hearth = await browser.hearth();
    const { people } = await household(hearth, ['adult', 'guest']);
    const [adult, guest] = people;

    await addAPasskeyAndSignInWithIt(browser, hearth, adult);

    // The name and passphrase, the account menu and signing out, on a page of its own at the usual address.
    const page = await browser.openPage(hearth, { allowErrors: [/\b401\b/] });
    const context = page.context();

    // A household: the sign-in screen asks for a name and passphrase, not the access token.
    const form = page.locator(signInForm);
    await form.waitFor({ state: 'visible' });
    expect(await form.getByLabel('Name').isVisible()).toBe(true);
    expect(await page.locator(sel.accessToken).isVisible()).toBe(false);
    expect(await page.locator(sel.message).isVisible()).toBe(false);
    await form.getByLabel('Name').fill(adult.person.name);
    await form.getByLabel('Passphrase').fill('not the passphrase');
    await form.getByRole('button', { name: 'Sign in' }).click();
    await form.locator('.login-error:not([hidden])').waitFor();
    expect(await form.locator('.login-error').textContent()).toMatch(/do not match/);
    expect(await form.isVisible()).toBe(true);
    await screenshot(page, 'household-sign-in-refused');
    await expectNoViolations(page, 'the sign-in screen, a passphrase refused');

    await form.getByLabel('Passphrase').fill(adult.passphrase);
    await form.getByLabel('Passphrase').press('Enter');
    await form.waitFor({ state: 'hidden' });
    await waitForApp(page);
    await expect.poll(() => page.locator(personButton).textContent(), { timeout: actionTimeoutMs }).toBe(adult.person.name);
    const cookie = (await context.cookies()).find((each) => each.name === signInCookie)!;
    expect(cookie).toMatchObject({ httpOnly: true, sameSite: 'Strict', path: '/', secure: false });
    // The page's script never holds it.
    expect(await page.evaluate(() => document.cookie)).not.toContain('hearth_session');

    // On a phone the account is at the foot of the session drawer.
    await page.setViewportSize({ width: 360, height: 740 });
    expect(await page.locator(personButton).isVisible()).toBe(false);
    await page.locator(sel.openSessions).click();
    await page.locator('#sidebar-person').click();
    await page.locator('#person-menu').waitFor({ state: 'visible' });
    expect(await page.locator('#person-menu').textContent()).toContain(`Signed in as ${adult.person.name}`);
    await page.keyboard.press('Escape');
    await page.locator('#person-menu').waitFor({ state: 'hidden' });
    await page.setViewportSize({ width: 1280, height: 800 });

    // The menu: sign out of this device.
    await page.locator(personButton).click();
    const menu = page.locator('#person-menu');
    await menu.waitFor({ state: 'visible' });
    expect(await menu.textContent()).toContain(`Signed in as ${adult.person.name}`);
    await menu.locator('.token-form').waitFor();
    await expectNoViolations(page, 'the account menu');

    // A personal API token: shown once, works as the adult, and refused at once when revoked.
    await menu.getByLabel('Token name').fill('Backup script');
    await menu.getByRole('button', { name: 'Create token' }).click();
    const made = menu.getByRole('textbox', { name: 'New token' });
    await made.waitFor();
    const token = await made.inputValue();
    const asToken = { authorization: `Bearer ${token}` };
    expect((await hearth.request('GET', '/me', undefined, asToken)).body).toMatchObject({ id: adult.person.id, via: 'api_token' });
    await menu.getByRole('button', { name: 'Revoke Backup script' }).click();
    await menu.locator('[data-token-id]', { hasText: 'Backup script' }).waitFor({ state: 'detached' });
    expect(await menu.getByRole('textbox', { name: 'New token' }).count()).toBe(0);
    expect((await hearth.request('GET', '/me', undefined, asToken)).status).toBe(401);

    // A new passphrase of their own, asked with the current one.
    await menu.getByLabel('Current passphrase').fill(adult.passphrase);
    await menu.getByLabel('New passphrase').fill('a newer passphrase');
    await menu.getByRole('button', { name: 'Change passphrase' }).click();
    await menu.getByText('Changed.').waitFor();
    expect((await hearth.request('POST', '/auth/sign-in', { name: adult.person.name, passphrase: 'a newer passphrase' })).status).toBe(200);

    // A Telegram link code to send the bot.
    await menu.getByRole('button', { name: 'Get a link code' }).click();
    const command = menu.getByRole('textbox', { name: 'Telegram link command' });
    await command.waitFor();
    expect(await command.inputValue()).toMatch(/^\/start \S+$/);

    // Signing out: the cookie the page holds now (the passphrase change gave it a fresh one) works until then, and never after.
    const held = (await context.cookies()).find((each) => each.name === signInCookie)!;
    const asHeld = { cookie: `${signInCookie}=${encodeURIComponent(held.value)}` };
    expect((await hearth.request('GET', '/me', undefined, asHeld)).status).toBe(200);
    await menu.getByRole('button', { name: 'Sign out', exact: true }).click();
    await form.waitFor({ state: 'visible' });
    expect(await page.locator(sel.message).isVisible()).toBe(false);
    expect((await hearth.request('GET', '/me', undefined, asHeld)).status).toBe(401);

    // Signed out, the same page signs a guest in.
    await signInOnPage(page, guest.person.name, guest.passphrase);
    await expectAGuestsPage(page);
  });

  it('the owner of a one-person Hearth sees the page as before, invites someone from the People panel who joins, changes their role and passphrase, and removes them keeping their sessions', { timeout: 90_000 }, async () => {
    const hearth = await browser.hearth();
    const ownerSession = await hearth.createSession();
    await said(hearth, ownerSession, 'Water the plants');
    const ownerPage = await browser.openPage(hearth, { hash: ownerSession, colorScheme: 'dark', permissions: ['clipboard-read', 'clipboard-write'] });
    await waitForApp(ownerPage);
    await ownerPage.locator(sel.sessionItem).first().waitFor();
    // One person on this machine: no sign-in, no account menu, no sharing; only a quiet People entry.
    expect(await ownerPage.locator(signInForm).isVisible()).toBe(false);
    expect(await ownerPage.locator('.person-anchor').isVisible()).toBe(false);
    expect(await ownerPage.locator(`${sel.sessionItem} button[aria-label="Share with the household"]`).count()).toBe(0);
    expect(await ownerPage.locator('#session-shared').isVisible()).toBe(false);
    expect(await ownerPage.locator(`${sel.sessionItem} .session-actions button`).evaluateAll((buttons) => buttons.map((button) => button.getAttribute('aria-label')))).toEqual(['Rename', 'Pin', 'Delete']);
    const peopleToggle = ownerPage.locator('#people-toggle');
    await peopleToggle.waitFor({ state: 'visible' });

    await peopleToggle.click();
    const panel = ownerPage.locator('aside.panel[aria-label="People"]');
    await panel.waitFor({ state: 'visible' });
    await panel.locator('.people-list li').first().waitFor();
    expect(await panel.locator('.people-list li').count()).toBe(1);
    // The owner chooses a name and a passphrase before anyone joins (loopback alone stops being enough then).
    expect(await panel.getByLabel('Your name').inputValue()).toBe('Owner');
    await panel.getByLabel('Your name').fill('Morgan');
    await panel.getByLabel('Your passphrase').fill('the owner passphrase');
    await panel.getByRole('button', { name: 'Save passphrase' }).click();
    await panel.locator('.people-list li', { hasText: 'Morgan' }).waitFor();
    expect((await hearth.deps.household.firstOwner()).name).toBe('Morgan');
    await panel.getByLabel('Role of the invited person').selectOption('child');
    await panel.getByRole('button', { name: 'Invite', exact: true }).click();
    const link = panel.getByRole('textbox', { name: 'Invitation link' });
    await link.waitFor();
    const url = await link.inputValue();
    expect(url).toMatch(/\/#invitation=/);
    await panel.getByRole('button', { name: 'Copy invitation link' }).click();
    expect(await ownerPage.evaluate(() => navigator.clipboard.readText())).toBe(url);
    await screenshot(ownerPage, 'household-people-invite');
    await expectNoViolations(ownerPage, 'the People panel with an invitation');

    // The invited person opens the link on their own device and joins.
    const joinPage = await browser.openPage(hearth, { hash: new URL(url).hash.slice(1), allowErrors: [/\b401\b/] });
    const join = joinPage.locator('form[aria-label="Join Hearth"]');
    await join.waitFor({ state: 'visible' });
    await expectNoViolations(joinPage, 'the join form');
    await join.getByLabel('Your name').fill('Robin');
    await join.getByLabel('Passphrase').fill('robin passphrase');
    await join.getByRole('button', { name: 'Join' }).click();
    await join.waitFor({ state: 'hidden' });
    await waitForApp(joinPage);
    expect(await joinPage.evaluate(() => location.hash)).toBe('');
    await expect.poll(() => joinPage.locator(personButton).textContent(), { timeout: actionTimeoutMs }).toBe('Robin');
    expect(await joinPage.locator('#people-toggle').isVisible()).toBe(false);

    // The link works once: opened again, the join form says so and offers the sign-in instead.
    const again = await browser.openPage(hearth, { hash: new URL(url).hash.slice(1), allowErrors: [/\b401\b|\b410\b/] });
    const joinAgain = again.locator('form[aria-label="Join Hearth"]');
    await joinAgain.getByLabel('Your name').fill('Robin twice');
    await joinAgain.getByLabel('Passphrase').fill('another passphrase');
    await joinAgain.getByRole('button', { name: 'Join' }).click();
    await joinAgain.locator('.login-error:not([hidden])').waitFor();
    await joinAgain.getByRole('button', { name: 'I already belong here: sign in instead' }).click();
    await again.locator(signInForm).waitFor({ state: 'visible' });
    expect(await again.evaluate(() => location.hash)).toBe('');

    // The owner's panel lists Robin as a child; the owner makes Robin an adult, then removes Robin, keeping the sessions.
    await panel.getByRole('button', { name: 'Refresh people' }).click();
    const robin = panel.locator('.people-list li', { hasText: 'Robin' });
    await robin.waitFor();
    expect(await robin.getAttribute('data-role')).toBe('child');
    await robin.getByLabel('Role of Robin').selectOption('adult');
    await panel.locator('.people-list li[data-role="adult"]', { hasText: 'Robin' }).waitFor();
    const robinId = (await robin.getAttribute('data-person-id'))!;
    // Robin starts a session of their own (before the new passphrase below ends Robin's sign-ins).
    await joinPage.locator(sel.newSession).click();
    await joinPage.waitForFunction(() => location.hash.length > 1);
    const robinSession = decodeURIComponent((await joinPage.evaluate(() => location.hash)).slice(1));
    await said(hearth, robinSession, 'Remember the dentist');
    // A new passphrase for Robin: the old one stops working, the new one signs in.
    await robin.getByRole('button', { name: 'New passphrase' }).click();
    await robin.getByLabel('New passphrase for Robin').fill('robin second passphrase');
    await robin.getByRole('button', { name: 'Set' }).click();
    await robin.getByLabel('New passphrase for Robin').waitFor({ state: 'detached' });
    const signIn = (passphrase: string) => hearth.request('POST', '/auth/sign-in', { name: 'Robin', passphrase });
    expect((await signIn('robin passphrase')).status).toBe(401);
    expect((await signIn('robin second passphrase')).status).toBe(200);
    expect((await hearth.deps.household.person(robinId))?.role).toBe('adult');
    // The owner's page is signed in with the passphrase it chose, now that loopback alone is not enough.
    expect(await ownerPage.locator('.person-anchor').isVisible()).toBe(true);

    await robin.getByRole('button', { name: 'Remove Robin' }).click();
    const dialog = ownerPage.locator('#remove-person-dialog');
    await dialog.waitFor({ state: 'visible' });
    expect(await dialog.textContent()).toContain('What becomes of their sessions?');
    await dialog.getByRole('button', { name: 'Give their sessions to me' }).click();
    await robin.waitFor({ state: 'detached' });
    expect(await hearth.deps.household.person(robinId)).toBeUndefined();
    await ownerPage.locator(`${sel.sessionItem}[data-session-id="${robinSession}"]`).waitFor();
  });
});
