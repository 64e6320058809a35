/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
// The Library panel (issue 39): a PDF dropped on it is indexed with a bar, the answer to a question cites its
// passage (the scripted model calls documents_search and copies the link it gave), and the citation opens the
// panel at that passage, highlighted. One page, one pass: browser time is the costliest test time.
import { readFile } from 'node:fs/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { expectNoViolations } from '../support/axe.ts';
import { browserTest, screenshot, sel, sendMessage, skipBrowserTests, useBrowser, waitForApp } from '../support/browser.ts';
import { documentFolder, type DocumentFolder } from '../support/document-files.ts';
import { hashedEmbedding } from '../support/hashed-embedding.ts';
import type { RecordedRequest } from '../support/scripted-llm.ts';

let files: DocumentFolder | undefined;
afterEach(async () => {
  await files?.remove();
  files = undefined;
});

/** The citation the tool's result offers for its first passage, as the model is told to copy it. */
function firstCitation(request: RecordedRequest): string | undefined {
  const tool = (request.body.messages as { role: string; content: string }[]).findLast((message) => message.role === 'tool');
  return tool && /\[[^\]]+\]\(\/documents\/[^)]+\)/.exec(tool.content)?.[0];
}

describe.skipIf(skipBrowserTests)('the Library panel', () => {
  const browser = useBrowser();

  it('takes a dropped PDF, shows its indexing and then ready; a citation in an answer opens the passage, highlighted; a delete asks first', browserTest, async () => {
    const hearth = await browser.hearth();
    files = await documentFolder();
    const pdf = await files.pdf('boiler manual.pdf', [
      [{ heading: 'Safety', paragraphs: ['Keep the area around the boiler clear of anything that burns.'] }],
      [{ heading: 'Operation', paragraphs: ['Turn the dial to set the water temperature between 40 and 60 degrees.'] }],
      [{ heading: 'Warranty', paragraphs: ['The heat exchanger is under warranty for seven years if the boiler is serviced every year.'] }],
    ]);
    // Embeddings wait until the test has seen the bar; then every text gets its hashed vector, as by default.
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    hearth.llm.embedWith(async (input) => {
      await held;
      return input.map((text) => hashedEmbedding(text));
    });
    hearth.llm.respondWith((request) => {
      const citation = firstCitation(request);
      if (citation) return { content: `The heat exchanger is under warranty for seven years, if the boiler is serviced yearly: ${citation}.` };
      if ((request.body.tools ?? []).some((tool: { function: { name: string } }) => tool.function.name === 'documents_search')) {
        return { toolCalls: [{ name: 'documents_search', arguments: { query: 'heat exchanger warranty' } }] };
      }
      return { content: 'Boiler warranty' };
    });

    const page = await browser.openPage(hearth);
    await waitForApp(page);
    await page.locator('#library-toggle').click();
    const panel = page.locator('aside.panel[aria-label="Library"]');
    await panel.locator('.library-empty').waitFor();

    const dataTransfer = await page.evaluateHandle(
      ({ base64, name }) => {
        const transfer = new DataTransfer();
        transfer.items.add(new File([Uint8Array.from(atob(base64), (character) => character.charCodeAt(0))], name, { type: 'application/pdf' }));
        return transfer;
      },
      { base64: (await readFile(pdf.path)).toString('base64'), name: pdf.name },
    );
    await panel.dispatchEvent('dragover', { dataTransfer });
    await panel.dispatchEvent('drop', { dataTransfer });

    const line = panel.locator('li[data-document-id]', { hasText: 'boiler manual.pdf' });
    await line.locator('progress').waitFor();
    expect(await line.getAttribute('data-status')).toBe('indexing');
    await expectNoViolations(page, 'Library panel, a document indexing');
    release();
    await panel.locator('li[data-status="ready"]', { hasText: 'boiler manual.pdf' }).waitFor();
    expect(await line.locator('progress').count()).toBe(0);
    await expect.poll(() => line.locator('.file-facts').textContent()).toMatch(/^3 pages · [\d.]+ KB · added /);
    await screenshot(page, 'library-ready');

    await sendMessage(page, 'How long is the heat exchanger under warranty?');
    const citation = page.locator(`${sel.assistant} a[href^="/documents/"]`);
    await citation.waitFor();
    expect(await citation.textContent()).toBe('boiler manual.pdf, p. 3');
    await citation.click();

    const highlighted = panel.locator('.passage-highlight');
    await highlighted.waitFor();
    expect(await highlighted.textContent()).toContain('seven years');
    expect(await highlighted.locator('.passage-where').textContent()).toBe('Page 3 · Warranty');
    await expect.poll(() => highlighted.evaluate((node) => node === document.activeElement)).toBe(true);
    const box = (await highlighted.boundingBox())!;
    const panelBox = (await panel.boundingBox())!;
    expect(box.y).toBeGreaterThanOrEqual(panelBox.y);
    expect(box.y + box.height).toBeLessThanOrEqual(panelBox.y + panelBox.height);
    // The page stayed where it was: the citation opened the panel instead of navigating.
    expect(new URL(page.url()).pathname).toBe('/');
    await expectNoViolations(page, 'Library panel, a passage opened from a citation');
    await screenshot(page, 'library-passage');

    // Back to the list; a delete asks first, and Cancel keeps the document.
    await panel.getByRole('button', { name: '← All documents' }).click();
    const dialog = page.locator('#document-delete-dialog');
    await panel.getByRole('button', { name: 'Delete boiler manual.pdf' }).click();
    expect(await dialog.locator('p').textContent()).toBe('Delete boiler manual.pdf? Its passages go with it, and answers no longer find it.');
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    await dialog.waitFor({ state: 'hidden' });
    expect((await hearth.request('GET', '/documents')).body.documents).toHaveLength(1);
    await panel.getByRole('button', { name: 'Delete boiler manual.pdf' }).click();
    await dialog.getByRole('button', { name: 'Delete' }).click();
    await line.waitFor({ state: 'detached' });
    expect((await hearth.request('GET', '/documents')).body).toEqual({ documents: [] });
  });
});
