/// <reference lib="dom" />
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { Page } from 'playwright-core';
import { expect } from 'vitest';

// Evaluated through the DevTools protocol: the page's CSP (script-src 'self') refuses an injected <script>.
const axeSource = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
/** WCAG 2.0 and 2.1, levels A and AA: what the page promises (issue 27). */
const wcagTags = ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'];

/** axe-core's violations on the page as it is now, one line each: rule, what it says, and the elements. */
export async function violations(page: Page): Promise<string[]> {
  if (!(await page.evaluate(() => 'axe' in window))) await page.evaluate(`(() => { ${axeSource}\n})()`);
  // Animations (a pulsing dot, a spinner) would be measured mid-fade.
  await page.emulateMedia({ reducedMotion: 'reduce' });
  const found = await page.evaluate(async (tags) => {
    const result = await (window as any).axe.run(document, { runOnly: { type: 'tag', values: tags }, resultTypes: ['violations'] });
    return result.violations.map((violation: any) => ({
      id: violation.id,
      help: violation.help,
      nodes: violation.nodes.map((node: any) => `${node.target.join(' ')}: ${node.failureSummary.replace(/\s+/g, ' ')}`),
    }));
  }, wcagTags);
  return found.flatMap((violation: { id: string; help: string; nodes: string[] }) => violation.nodes.map((node) => `${violation.id} (${violation.help}) ${node}`));
}

/** Checks the page as it is now; soft, so every scene of a test is checked and reported, not only the first with a violation. */
export async function expectNoViolations(page: Page, where: string): Promise<void> {
  const found = await violations(page);
  if (found.length > 0) console.log(`${where}:\n${found.join('\n')}`);
  expect.soft(found, `axe-core violations: ${where}`).toEqual([]);
}
