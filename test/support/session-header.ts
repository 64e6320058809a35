/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
// The session header's profile and model (issue 35): chosen inline or through the collapsed
// control's menu, and what the header cuts short, each text box measured against its text.
import type { Page } from 'playwright-core';

export interface CutShort {
  name: string;
  text: string;
  /** The width the box shows, and the width its text needs, in CSS pixels. */
  shown: number;
  needed: number;
}

/** The collapsed header's one control for the profile and the model (absent while they show inline). */
export const sessionChoiceButton = '.session-header button[data-role="session-choice"]';

/**
 * Brings the header's profile and model selects into view: they show inline, or the collapsed
 * control opens its menu. Answers which it was ('hidden' when neither shows them).
 */
export async function sessionChoice(page: Page): Promise<'inline' | 'menu' | 'hidden'> {
  const button = page.locator(sessionChoiceButton);
  if ((await button.count()) > 0 && (await button.isVisible())) {
    if ((await button.getAttribute('aria-expanded')) !== 'true') await button.click();
    await page.locator('#session-profile').waitFor({ state: 'visible' });
    return 'menu';
  }
  return (await page.locator('#session-profile').isVisible()) ? 'inline' : 'hidden';
}

/** Closes the collapsed control's menu when it is open. */
export async function closeSessionChoice(page: Page): Promise<void> {
  const button = page.locator(sessionChoiceButton);
  if ((await button.count()) === 0 || !(await button.isVisible()) || (await button.getAttribute('aria-expanded')) !== 'true') return;
  await page.keyboard.press('Escape');
  await page.locator(`${sessionChoiceButton}[aria-expanded="false"]`).waitFor();
}

/** Chooses `value` in the header's select `selector` (the profile or the model), through the menu when collapsed. */
export async function chooseInHeader(page: Page, selector: string, value: string): Promise<void> {
  await sessionChoice(page);
  await page.locator(selector).selectOption(value);
  await closeSessionChoice(page);
}

/** The header's text boxes narrower than their text, with the menu of the collapsed control measured open too. */
export async function truncatedInHeader(page: Page): Promise<CutShort[]> {
  const closed = await measureCutShort(page);
  if ((await sessionChoice(page)) !== 'menu') return closed;
  const open = await measureCutShort(page);
  await closeSessionChoice(page);
  return [...closed, ...open.filter((box) => !closed.some((seen) => seen.name === box.name && seen.text === box.text))];
}

function measureCutShort(page: Page): Promise<CutShort[]> {
  return page.evaluate(() => {
    const header = document.querySelector('.session-header')!;
    const shownOnScreen = (node: Element): boolean => {
      for (let current: Element | null = node; current; current = current.parentElement) {
        const style = getComputedStyle(current);
        // Text kept for screen readers only (clipped to nothing) is not on the screen to cut.
        if (style.clipPath !== 'none' || (style.clip !== 'auto' && style.clip !== '')) return false;
      }
      const box = node.getBoundingClientRect();
      return box.width > 1 && box.height > 1 && getComputedStyle(node).visibility !== 'hidden' && node.checkVisibility();
    };
    const nameOf = (node: Element) => node.getAttribute('aria-label') || node.id || (typeof node.className === 'string' ? node.className : '') || node.tagName;
    const found: { name: string; text: string; shown: number; needed: number }[] = [];
    for (const node of header.querySelectorAll('*')) {
      if (node.closest('#session-title, meter') || !shownOnScreen(node)) continue; // a meter's text is its fallback, never drawn
      if (node instanceof HTMLSelectElement) {
        // The select's width when nothing squeezes it: the chosen option's text, the padding and the arrow.
        const probe = node.cloneNode(true) as HTMLSelectElement;
        probe.selectedIndex = node.selectedIndex;
        probe.removeAttribute('id');
        probe.style.cssText = 'position:absolute;left:0;top:0;visibility:hidden;field-sizing:content;width:auto;min-width:0;max-width:none;flex:none';
        node.after(probe);
        const needed = probe.getBoundingClientRect().width;
        probe.remove();
        const shown = node.getBoundingClientRect().width;
        if (shown + 0.5 < needed) found.push({ name: nameOf(node), text: node.selectedOptions[0]?.textContent ?? '', shown, needed });
        continue;
      }
      const ownText = [...node.childNodes].some((child) => child.nodeType === Node.TEXT_NODE && (child.textContent ?? '').trim() !== '');
      if (!ownText) continue;
      // The box the text must fit in: the element itself, or for an inline one its nearest block.
      let frame: Element = node;
      while (getComputedStyle(frame).display === 'inline' && frame.parentElement) frame = frame.parentElement;
      const range = document.createRange();
      range.selectNodeContents(node);
      const text = range.getBoundingClientRect();
      const box = frame.getBoundingClientRect();
      const overflows = frame.scrollWidth > frame.clientWidth + 0.5 && getComputedStyle(frame).overflowX !== 'visible';
      if (overflows || text.left < box.left - 0.5 || text.right > box.right + 0.5) {
        found.push({ name: nameOf(node), text: (node.textContent ?? '').trim(), shown: Math.min(box.width, frame.clientWidth || box.width), needed: Math.max(text.width, frame.scrollWidth) });
      }
    }
    return found;
  });
}
