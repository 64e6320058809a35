/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
// The Files panel (issue 35): the open session's uploads and the files its tools wrote, each with
// size, age, a download and a delete, and how long they are kept; on a phone and a desktop.
import { writeFile } from 'node:fs/promises';
import { buffer } from 'node:stream/consumers';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Tool } from '../../src/tools/tool.ts';
import { expectNoViolations } from '../support/axe.ts';
import { browserTest, openPanel, screenshot, sendMessage, skipBrowserTests, useBrowser, waitForAnswer, waitForApp } from '../support/browser.ts';

const writerProfile = `---\nid: writer\nname: Writer\nmax_iterations: 3\ntools: [write_report]\n---\nYou write reports.\n`;

/** Writes report.md into the session's folder, as a tool's work lands there. */
function reportTool(filesDirectory: () => string): Tool<{ text: string }> {
  return {
    name: 'write_report',
    description: 'Writes a report into the session folder.',
    parameters: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'], additionalProperties: false },
    async execute(args, context) {
      await writeFile(path.join(filesDirectory(), context.sessionId, 'report.md'), args.text);
      return { output: 'Written to report.md', success: true };
    },
  };
}

const viewports = { phone: { width: 390, height: 844, colorScheme: 'light' }, desktop: { width: 1366, height: 768, colorScheme: 'dark' } } as const;

describe.skipIf(skipBrowserTests)('the Files panel', () => {
  const browser = useBrowser();

  for (const [device, { colorScheme, ...viewport }] of Object.entries(viewports)) {
    it(`shows uploads and a tool's file, downloads and deletes them, and says how long they are kept (${device}, ${colorScheme})`, browserTest, async () => {
      let filesDirectory = '';
      const hearth = await browser.hearth({ tools: [reportTool(() => filesDirectory)], profiles: { writer: writerProfile }, env: { SESSION_FILES_TTL_HOURS: '72' } });
      filesDirectory = hearth.config.SESSION_FILES_DIR;
      const sessionId = await hearth.createSession('writer');
      const page = await browser.openPage(hearth, { hash: sessionId, viewport, colorScheme });
      await waitForApp(page);

      const panel = await openPanel(page, 'Files');
      await panel.getByText('No files yet.').waitFor();
      expect(await panel.locator('.files-retention').textContent()).toBe('Files are kept for 3 days after their last change, then removed.');

      await page.locator('#files-panel-upload').setInputFiles({ name: 'shopping list.txt', mimeType: 'text/plain', buffer: Buffer.from('eggs\nmilk\n') });
      const uploaded = panel.locator('li[data-file-name="shopping list.txt"]');
      await uploaded.waitFor();
      expect((await uploaded.locator('.file-facts').textContent())?.trim()).toBe('10 B · just now');

      const downloading = page.waitForEvent('download');
      await uploaded.getByRole('link', { name: 'Download shopping list.txt' }).click();
      const download = await downloading;
      expect(download.suggestedFilename()).toBe('shopping list.txt');
      expect(await buffer(await download.createReadStream())).toEqual(Buffer.from('eggs\nmilk\n'));

      // A tool writes a file in a turn; the open panel hears the turn end and lists it.
      hearth.llm.script({ toolCalls: [{ name: 'write_report', arguments: { text: '# Report\n\nAll done.' } }] }, { content: 'The report is in report.md.' });
      await sendMessage(page, 'Write the report');
      await waitForAnswer(page, 'The report is in report.md.');
      if (!(await panel.isVisible())) await openPanel(page, 'Files');
      const report = panel.locator('li[data-file-name="report.md"]');
      await report.waitFor();
      expect((await report.locator('.file-facts').textContent())?.trim()).toBe('19 B · just now');
      await expectNoViolations(page, `the Files panel (${device})`);
      await screenshot(page, `third-hour-files-${device}`);

      await uploaded.getByRole('button', { name: 'Delete shopping list.txt' }).click();
      await uploaded.waitFor({ state: 'detached' });
      expect((await hearth.request('GET', `/sessions/${sessionId}/files`)).body.files.map((file: { name: string }) => file.name)).toEqual(['report.md']);
    });
  }
});
