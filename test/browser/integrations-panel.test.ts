/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
// The Integrations panel (issue 16): each integration's status, details and message, live from
// integration_status; and smart-home tool output (compact text lines) shown as it came.
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import type { AppDependencies } from '../../src/app-dependencies.ts';
import type { IntegrationStatus } from '../../src/integrations/integration-registry.ts';
import type { Tool } from '../../src/tools/tool.ts';
import type { Hearth } from '../support/hearth-server.ts';
import { browserTest, screenshot, sel, sendMessage, skipBrowserTests, useBrowser, waitForAnswer, waitForApp, waitForEventsSocket, waitForIdle } from '../support/browser.ts';

const panelSelector = 'aside.panel[aria-label="Integrations"]';

/** Reports straight into the running app's registry, as the Home Assistant and MQTT connections do. */
function report(hearth: Hearth, status: IntegrationStatus) {
  (hearth.deps as AppDependencies).integrations.report(status);
}

async function openIntegrationsPanel(page: Page) {
  await page.locator('header button.panel-toggle[aria-label="Integrations"]').click();
  const panel = page.locator(panelSelector);
  await panel.waitFor({ state: 'visible' });
  return panel;
}


const houseLines = [
  'light.kitchen "Kitchen ceiling" [Kitchen] on, brightness 204',
  'sensor.bedroom_temperature "Bedroom temperature" [Bedroom] 19.5 °C',
  'lock.front_door "Front door" [Hall] locked',
  'climate.living_room "Thermostat" [Living room] heat, 21 → 20.5 °C',
  '{"state": "on", "if": true}',
];

const houseTool: Tool = {
  name: 'house_lines',
  description: 'Answers compact lines about the house, as the home_assistant tool does.',
  parameters: { type: 'object', properties: {} },
  execute: async () => houseLines.join('\n'),
};

const houseProfile = `---
id: house_tester
name: House tester
description: Looks at the house in tests.
temperature: 0.1
max_iterations: 3
tools: [house_lines]
---
You look at the house.
`;

describe.skipIf(skipBrowserTests)('the Integrations panel', () => {
  const browser = useBrowser();

  it('lists each integration with its status, details and message, and follows status changes live', browserTest, async () => {
    const hearth = await browser.hearth();
    report(hearth, { name: 'home_assistant', status: 'failed', message: 'Home Assistant refused the token: set `HA_TOKEN` to a long-lived token <b>now</b>', details: {} });
    report(hearth, { name: 'mqtt', status: 'connected', details: { broker: 'mqtt://127.0.0.1:1883' } });
    report(hearth, { name: 'weather_mcp', status: 'not_configured', message: 'Add it to `mcp.json`', details: {} });
    const page = await browser.openPage(hearth);
    await waitForApp(page);
    await waitForEventsSocket(page);
    const panel = await openIntegrationsPanel(page);

    const homeAssistant = panel.locator('li[data-integration="home_assistant"]');
    const mqtt = panel.locator('li[data-integration="mqtt"]');
    const weather = panel.locator('li[data-integration="weather_mcp"]');
    await homeAssistant.waitFor();
    expect(await homeAssistant.getAttribute('data-status')).toBe('failed');
    expect(await homeAssistant.locator('.integration-name').textContent()).toBe('Home Assistant');
    expect(await homeAssistant.locator('.integration-state').textContent()).toBe('failed');
    // The server's message, its backticked parts as code, its markup as text.
    const message = homeAssistant.locator('.integration-message');
    expect(await message.textContent()).toBe('Home Assistant refused the token: set HA_TOKEN to a long-lived token <b>now</b>');
    expect(await message.locator('code').allTextContents()).toEqual(['HA_TOKEN']);
    expect(await message.locator('b').count()).toBe(0);
    expect(await homeAssistant.locator('.integration-details').count()).toBe(0);

    expect(await mqtt.locator('.integration-name').textContent()).toBe('MQTT');
    expect(await mqtt.locator('.integration-state').textContent()).toBe('connected');
    expect(await mqtt.locator('.integration-details').textContent()).toBe('Broker mqtt://127.0.0.1:1883');
    expect(await mqtt.locator('.integration-message').count()).toBe(0);

    // A name without a friendly label is shown as the server gives it.
    expect(await weather.locator('.integration-name').textContent()).toBe('weather_mcp');
    expect(await weather.locator('.integration-state').textContent()).toBe('not configured');
    expect(await weather.locator('.integration-message code').allTextContents()).toEqual(['mcp.json']);

    // The dot's colour follows the status.
    const dotColour = (row: typeof mqtt) => row.locator('.integration-state').evaluate((node) => getComputedStyle(node, '::before').color);
    expect(await dotColour(mqtt)).not.toBe(await dotColour(homeAssistant));
    await screenshot(page, 'integrations-panel');

    // Home Assistant reconnects while the panel is open: connecting, then connected with what it holds.
    report(hearth, { name: 'home_assistant', status: 'connecting', details: {} });
    await panel.locator('li[data-integration="home_assistant"][data-status="connecting"]').waitFor();
    expect(await homeAssistant.locator('.integration-state').textContent()).toBe('connecting…');
    expect(await homeAssistant.locator('.integration-message').count()).toBe(0);
    report(hearth, { name: 'home_assistant', status: 'connected', details: { entities: 31, areas: 6 } });
    await panel.locator('li[data-integration="home_assistant"][data-status="connected"]').waitFor();
    expect(await homeAssistant.locator('.integration-details').textContent()).toBe('31 entities in 6 areas');
    expect(await homeAssistant.locator('.integration-state').textContent()).toBe('connected');

    // The broker goes away: its row turns failed with the reason, the others stay as they were.
    report(hearth, { name: 'mqtt', status: 'failed', message: 'Cannot reach the broker at mqtt://127.0.0.1:1883', details: { broker: 'mqtt://127.0.0.1:1883' } });
    await panel.locator('li[data-integration="mqtt"][data-status="failed"]').waitFor();
    expect(await mqtt.locator('.integration-message').textContent()).toBe('Cannot reach the broker at mqtt://127.0.0.1:1883');
    expect(await homeAssistant.getAttribute('data-status')).toBe('connected');

    // Opened again later, the panel reads the server's list and agrees with it.
    await page.locator('header button.panel-toggle[aria-label="Integrations"]').click();
    await panel.waitFor({ state: 'hidden' });
    report(hearth, { name: 'mqtt', status: 'connected', details: { broker: 'mqtt://127.0.0.1:1883' } });
    await openIntegrationsPanel(page);
    await panel.locator('li[data-integration="mqtt"][data-status="connected"]').waitFor();
    const { body } = await hearth.request('GET', '/integrations');
    const shown = await panel.locator('li[data-integration]').evaluateAll((rows) => rows.map((row) => [(row as HTMLElement).dataset.integration, (row as HTMLElement).dataset.status]));
    expect(shown).toEqual(body.integrations.map((integration: IntegrationStatus) => [integration.name, integration.status]));
  });

  it('shows the Telegram channel connected as its bot, and failed with the reason and when it tries again', browserTest, async () => {
    const hearth = await browser.hearth();
    report(hearth, { name: 'telegram', status: 'connected', details: { bot: '@hearth_home_bot' } });
    const page = await browser.openPage(hearth);
    await waitForApp(page);
    await waitForEventsSocket(page);
    const panel = await openIntegrationsPanel(page);
    const telegram = panel.locator('li[data-integration="telegram"]');
    await telegram.waitFor();
    expect(await telegram.locator('.integration-name').textContent()).toBe('Telegram');
    expect(await telegram.locator('.integration-state').textContent()).toBe('connected');
    expect(await telegram.locator('.integration-details').textContent()).toBe('Bot @hearth_home_bot');
    const retryAt = new Date(Date.now() + 60_000).toISOString();
    report(hearth, {
      name: 'telegram',
      status: 'failed',
      message: 'Telegram refused the bot token (401 Unauthorized): check `TELEGRAM_BOT_TOKEN` with @BotFather.',
      details: { retry_at: retryAt },
    });
    await panel.locator('li[data-integration="telegram"][data-status="failed"]').waitFor();
    expect(await telegram.locator('.integration-message').textContent()).toBe('Telegram refused the bot token (401 Unauthorized): check TELEGRAM_BOT_TOKEN with @BotFather.');
    const expected = await page.evaluate((at) => `Trying again at ${new Date(at).toLocaleTimeString()}`, retryAt);
    expect(await telegram.locator('.integration-details').textContent()).toBe(expected);
  });

  it('an empty list says none are configured and points to docs/integrations.md', browserTest, async () => {
    const hearth = await browser.hearth();
    const page = await browser.openPage(hearth);
    // Whatever the server holds by itself, this page is told there is nothing.
    await page.route('**/integrations', (route) => route.fulfill({ status: 200, contentType: 'application/json', body: JSON.stringify({ integrations: [] }) }));
    await waitForApp(page);
    const panel = await openIntegrationsPanel(page);
    const empty = panel.locator('.integrations-empty');
    await empty.waitFor();
    expect(await empty.textContent()).toContain('No integrations are configured');
    expect(await empty.textContent()).toContain('docs/integrations.md');
    expect(await empty.locator('code').allTextContents()).toEqual(['HA_URL', 'HA_TOKEN', 'MQTT_URL', 'mcp.json']);
    expect(await panel.locator('li[data-integration]').count()).toBe(0);
  });

  it('a tool card shows multi-line plain output line for line, without syntax colours', browserTest, async () => {
    const hearth = await browser.hearth({ tools: [houseTool], profiles: { house_tester: houseProfile } });
    hearth.llm.script({ toolCalls: [{ name: 'house_lines', arguments: {} }] }, { content: 'The kitchen light is on.' });
    const { page } = await browser.openSession(hearth, 'house_tester');
    await sendMessage(page, 'What is on in the house?');
    await waitForAnswer(page, 'The kitchen light is on.');
    await waitForIdle(page);

    const card = page.locator(`${sel.tool}[data-tool="house_lines"][data-status="done"]`);
    await card.waitFor();
    await card.locator('.tool-result > summary').click();
    const output = card.locator('pre.tool-result-text');
    await output.waitFor({ state: 'visible' });
    expect(await output.textContent()).toBe(houseLines.join('\n'));
    expect(await output.evaluate((node) => (node as HTMLElement).innerText.split('\n'))).toEqual(houseLines);
    expect(await output.evaluate((node) => getComputedStyle(node).whiteSpace)).toBe('pre-wrap');
    // Plain text: no highlighter classes or colour spans, not even for the line that looks like JSON.
    expect(await card.locator('.tool-result [class*="hljs"]').count()).toBe(0);
    expect(await output.locator('*').count()).toBe(0);
    // Each line is its own line on screen: the block is as tall as its lines.
    const lineHeights = await output.evaluate((node) => {
      const style = getComputedStyle(node);
      return (node.scrollHeight - parseFloat(style.paddingTop) - parseFloat(style.paddingBottom)) / parseFloat(style.lineHeight === 'normal' ? String(parseFloat(style.fontSize) * 1.2) : style.lineHeight);
    });
    expect(lineHeights).toBeGreaterThanOrEqual(houseLines.length - 0.5);
    await screenshot(page, 'integrations-tool-card');
  });
});
