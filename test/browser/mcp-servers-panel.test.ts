/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
// MCP servers on the page (docs/integrations.md, "MCP servers"): the Tools panel groups MCP tools by server with each
// server's state and message and a switch per tool; the Integrations panel lists the servers; both
// follow edits of mcp.json live. Real servers: server-everything over stdio, a missing command,
// and the fixture server (whose add_tool changes its tool list at runtime).
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import type { Hearth } from '../support/hearth-server.ts';
import { browserTest, openPanel, screenshot, sel, sendMessage, skipBrowserTests, useBrowser, waitForAnswer, waitForApp, waitForEventsSocket } from '../support/browser.ts';
import { everythingStdio, fixtureServer, missingCommand, writeMcpConfig } from '../support/mcp-servers.ts';
import { runTool } from '../support/tool-context.ts';

interface ServerSummary {
  name: string;
  transport: 'stdio' | 'http';
  status: 'connecting' | 'connected' | 'failed';
  message?: string;
  tools: string[];
}

interface ToolEntry {
  name: string;
  description: string;
  source: string;
  server?: string;
  enabled?: boolean;
  prompt_characters?: number;
}

async function agentTools(hearth: Hearth): Promise<{ tools: ToolEntry[]; servers: ServerSummary[] }> {
  const { body } = await hearth.request('GET', '/agents/tools');
  return body;
}



const missingMessage = 'command not found: hearth-test-no-such-command';

describe.skipIf(skipBrowserTests)('MCP servers on the page', () => {
  const browser = useBrowser();

  it('groups MCP tools by server with its state, switches one on for every profile, and follows mcp.json edits live in the Tools and Integrations panels', browserTest, async () => {
    const dataDir = await mkdtemp(path.join(tmpdir(), 'hearth-browser-mcp-'));
    onTestFinished(() => rm(dataDir, { recursive: true, force: true }));
    const mcpFile = path.join(dataDir, 'mcp.json');
    await writeMcpConfig(mcpFile, { everything: everythingStdio(), broken: missingCommand() });
    const hearth = await browser.hearth({ dataDir });
    expect(hearth.config.MCP_CONFIG_FILE).toBe(mcpFile);

    const { page } = await browser.openSession(hearth, 'secretary');
    await waitForEventsSocket(page);
    const tools = await openPanel(page, 'Tools');
    const everything = tools.locator('section.mcp-server[data-mcp-server="everything"]');
    const broken = tools.locator('section.mcp-server[data-mcp-server="broken"]');
    await tools.locator('section.mcp-server[data-mcp-server="everything"][data-status="connected"]').waitFor();
    await tools.locator('section.mcp-server[data-mcp-server="broken"][data-status="failed"]').waitFor();

    // The working server: connected with its tools, all of them under it, in the server's order, each with its switch and short description.
    const { tools: entries, servers } = await agentTools(hearth);
    const everythingSummary = servers.find((server) => server.name === 'everything')!;
    expect(everythingSummary.status).toBe('connected');
    expect(everythingSummary.tools.length).toBeGreaterThan(5);
    expect(await everything.locator('.mcp-server-name').textContent()).toBe('everything');
    expect(await everything.locator('.mcp-server-state').textContent()).toBe(`connected · ${everythingSummary.tools.length} tools`);
    expect(await everything.locator('.tool-meta').first().textContent()).toMatch(/^Over stdio · Personal Secretary uses none of them · all of them add [\d,]+ characters per turn$/);
    const shownNames = await everything.locator('li[data-tool-name]').evaluateAll((items) => items.map((item) => (item as HTMLElement).dataset.toolName));
    expect(shownNames).toEqual(everythingSummary.tools);
    const echoEntry = entries.find((entry) => entry.name === 'everything__echo')!;
    // Off as configured: a server's tools reach only the profiles that name them until switched on here.
    expect(echoEntry).toMatchObject({ source: 'mcp', server: 'everything', enabled: false });
    const echo = everything.locator('li[data-tool-name="everything__echo"]');
    expect(await echo.locator('p.muted').textContent()).toBe(echoEntry.description.replace(' (MCP server everything)', ''));
    expect(await echo.locator('input[role="switch"]').isChecked()).toBe(false);
    expect(await echo.getAttribute('data-in-profile')).toBe('false');
    expect(await echo.locator('[data-role="prompt-cost"]').textContent()).toBe(`Adds ${echoEntry.prompt_characters!.toLocaleString('en')} characters to every turn that offers it`);
    // One switch per tool, and one for the whole server.
    expect(await everything.locator('li input[role="switch"]').count()).toBe(everythingSummary.tools.length);
    expect(await everything.locator('input[aria-label="Use all tools of everything"]').isChecked()).toBe(false);
    // MCP tools are only under their server, never in the profile's or the other tools' lists.
    expect(await tools.locator('li[data-source="mcp"]:not(section.mcp-server li)').count()).toBe(0);

    // The broken server: failed, with its reason as a note, and no tools.
    expect(await broken.locator('.mcp-server-state').textContent()).toBe('failed');
    const reason = broken.locator('.mcp-server-message');
    expect(await reason.textContent()).toBe(missingMessage);
    expect(await reason.getAttribute('role')).toBe('note');
    expect(await broken.locator('li[data-tool-name]').count()).toBe(0);
    expect(await broken.locator('.mcp-server-empty').textContent()).toContain('keeps trying');
    // Its error is told in its section only, not again among the files that failed to load.
    expect(await tools.locator('.tool-errors').count()).toBe(0);
    // Each server has one section, and the built-in and user tools keep theirs.
    expect(await tools.locator('section.mcp-server').count()).toBe(2);
    await tools.locator('[data-tool-group="in-profile"] li[data-tool-name]').first().waitFor();
    await tools.locator('section[data-tool-group="mcp"] > h3').scrollIntoViewIfNeeded();
    await screenshot(page, 'mcp-servers-tools-panel');
    await broken.scrollIntoViewIfNeeded();
    await screenshot(page, 'mcp-servers-tools-panel-failed');

    // Switching a tool on through the panel offers it to the open session's profile, which does not name it.
    await echo.locator('input[role="switch"]').click();
    await everything.locator('li[data-tool-name="everything__echo"][data-enabled="true"][data-in-profile="true"]').waitFor();
    expect((await agentTools(hearth)).tools.find((entry) => entry.name === 'everything__echo')).toMatchObject({ enabled: true });
    expect(await everything.locator('.tool-meta').first().textContent()).toMatch(/^Over stdio · Personal Secretary uses 1 of them · all of them add [\d,]+ characters per turn$/);
    expect(await tools.locator('[data-role="prompt-budget-warning"]').count()).toBe(0);

    // And it is used in the same session, from the next message on.
    hearth.llm.script({ toolCalls: [{ name: 'everything__echo', arguments: { message: 'switched on' } }] }, { content: 'It echoed.' });
    await sendMessage(page, 'Echo something');
    await page.locator(`${sel.tool}[data-tool="everything__echo"][data-status="done"]`).waitFor();
    await waitForAnswer(page, 'It echoed.');
    expect(await page.locator(`${sel.tool}[data-tool="everything__echo"] .tool-result-text`).textContent()).toContain('switched on');

    // The whole server at once: the profile's prompt then passes the budget, and the panel says so.
    await everything.locator('input[aria-label="Use all tools of everything"]').click();
    await tools.locator('[data-role="prompt-budget-warning"]').waitFor();
    expect(await tools.locator('[data-role="prompt-budget-warning"]').textContent()).toMatch(/^Personal Secretary sends [\d,]+ characters .* past the budget of 12,000/);
    // The warning and the switches are drawn from two answers: wait for the last switch to turn on.
    await everything.locator('li input[role="switch"]:not(:checked)').first().waitFor({ state: 'detached' });
    expect(await everything.locator('li input[role="switch"]:not(:checked)').count()).toBe(0);
    await screenshot(page, 'mcp-servers-tools-panel-over-budget');
    await everything.locator('input[aria-label="Use all tools of everything"]').click();
    await tools.locator('[data-role="prompt-budget-warning"]').waitFor({ state: 'detached' });
    await everything.locator('li[data-tool-name="everything__echo"][data-enabled="false"]').waitFor();
    // Off takes it from every profile.
    expect((await agentTools(hearth)).tools.find((entry) => entry.name === 'everything__echo')).toMatchObject({ enabled: false });

    // A second page with the Integrations panel open: the servers are there as mcp:<name>.
    const other = await browser.openPage(hearth);
    await waitForApp(other);
    await waitForEventsSocket(other);
    const integrations = await openPanel(other, 'Integrations');
    const everythingRow = integrations.locator('li[data-integration="mcp:everything"][data-status="connected"]');
    const brokenRow = integrations.locator('li[data-integration="mcp:broken"][data-status="failed"]');
    await everythingRow.waitFor();
    expect(await everythingRow.locator('.integration-details').textContent()).toBe(`MCP server over stdio with ${everythingSummary.tools.length} tools`);
    expect(await brokenRow.locator('.integration-message').textContent()).toBe(missingMessage);
    expect(await brokenRow.locator('.integration-details').textContent()).toBe('MCP server over stdio');

    // mcp.json loses the broken server and gains the fixture: both panels follow without a reload.
    await writeMcpConfig(mcpFile, { everything: everythingStdio(), fixture: fixtureServer() });
    const fixture = tools.locator('section.mcp-server[data-mcp-server="fixture"]');
    await broken.waitFor({ state: 'detached' });
    await tools.locator('section.mcp-server[data-mcp-server="fixture"][data-status="connected"]').waitFor();
    await fixture.locator('li[data-tool-name="fixture__add_tool"]').waitFor();
    const fixtureSummary = (await agentTools(hearth)).servers.find((server) => server.name === 'fixture')!;
    const fixtureNames = () => fixture.locator('li[data-tool-name]').evaluateAll((items) => items.map((item) => (item as HTMLElement).dataset.toolName));
    expect(await fixtureNames()).toEqual(fixtureSummary.tools);
    // The server that stayed was left alone: still connected, its tool still off.
    expect(await everything.getAttribute('data-status')).toBe('connected');
    expect(await everything.locator('li[data-tool-name="everything__echo"] input[role="switch"]').isChecked()).toBe(false);
    await brokenRow.waitFor({ state: 'detached' });
    await integrations.locator('li[data-integration="mcp:fixture"][data-status="connected"]').waitFor();
    expect(await integrations.locator('li[data-status="removed"]').count()).toBe(0);

    // A server's own list changes at runtime (tools_changed): its new tool appears under it.
    const addTool = hearth.deps.tools.get('fixture__add_tool');
    if (!addTool) throw new Error('the registry has no fixture__add_tool');
    expect((await runTool(addTool.tool, { name: 'late_tool' })).success).toBe(true);
    await fixture.locator('li[data-tool-name="fixture__late_tool"]').waitFor();
    expect(await fixture.locator('.mcp-server-state').textContent()).toBe(`connected · ${fixtureSummary.tools.length + 1} tools`);

    // The fixture is taken out again: its section and its row go, and what the panels show agrees with the server.
    await writeMcpConfig(mcpFile, { everything: everythingStdio() });
    await fixture.waitFor({ state: 'detached' });
    await integrations.locator('li[data-integration="mcp:fixture"]').waitFor({ state: 'detached' });
    expect(await tools.locator('section.mcp-server').evaluateAll((sections) => sections.map((section) => (section as HTMLElement).dataset.mcpServer))).toEqual(['everything']);
    const { body } = await hearth.request('GET', '/integrations');
    const shown = await integrations.locator('li[data-integration]').evaluateAll((rows) => rows.map((row) => (row as HTMLElement).dataset.integration));
    expect(shown).toEqual(body.integrations.map((integration: { name: string }) => integration.name));
    await screenshot(other, 'mcp-servers-integrations-panel');

    // The switch turns the tool on again.
    await everything.locator('li[data-tool-name="everything__echo"] input[role="switch"]').click();
    await everything.locator('li[data-tool-name="everything__echo"][data-enabled="true"]').waitFor();
    expect((await agentTools(hearth)).tools.find((entry) => entry.name === 'everything__echo')).toMatchObject({ enabled: true });
  });
});
