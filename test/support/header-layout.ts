/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
// The session header as the page lays it out (issue 27: a title kept readable, the controls in one
// row from 360 px up): element boxes measured in the page and checked for room and overlap.
import type { Page } from 'playwright-core';
import { expect } from 'vitest';

/**
 * How much of the title the header keeps at the least, in CSS pixels: about ten characters on a
 * 360 px phone, about twenty from 768 px up, also with a side panel open. A shorter title is shown whole.
 */
const titleRoom = (width: number): number => (width < 720 ? 95 : 180);

/** A phone header is a small fraction of the screen: 844 px tall, it may take 64 (it took 237). */
const phoneHeaderLimit = 64;

export const headerViewports = [
  { width: 360, height: 740 },
  { width: 768, height: 1024 },
  { width: 1366, height: 768 },
];

interface Box {
  name: string;
  x: number;
  y: number;
  width: number;
  height: number;
}

export interface HeaderMeasure {
  header: { top: number; height: number };
  title: { width: number; natural: number; visible: boolean };
  /** The visible controls of the header (buttons, selects, the title, the backend line), nested ones left out. */
  controls: Box[];
}

/**
 * Element boxes of the header as the page lays it out, once it has answered the last change: a resize
 * reaches the header's fit through a ResizeObserver (after a frame's animation callbacks) and its
 * next animation frame, so three frames pass before measuring.
 */
export function measureHeader(page: Page): Promise<HeaderMeasure> {
  return page.evaluate(async () => {
    for (let frame = 0; frame < 3; frame++) await new Promise(requestAnimationFrame);
    const header = document.querySelector('.session-header')!;
    const titleNode = document.querySelector('#session-title') as HTMLElement;
    const candidates = [...header.querySelectorAll<HTMLElement>('h1, button, select, .backend-status, meter')].filter((node) => {
      const box = node.getBoundingClientRect();
      return box.width > 0 && box.height > 0 && getComputedStyle(node).visibility !== 'hidden';
    });
    const controls = candidates
      .filter((node) => !candidates.some((other) => other !== node && other.contains(node)))
      .map((node) => {
        const box = node.getBoundingClientRect();
        const name = node.getAttribute('aria-label') ?? node.id ?? node.className;
        return { name: name || node.tagName, x: box.x, y: box.y, width: box.width, height: box.height };
      });
    const headerBox = header.getBoundingClientRect();
    const titleBox = titleNode.getBoundingClientRect();
    // The title's width when nothing cuts it.
    const probe = titleNode.cloneNode(true) as HTMLElement;
    probe.style.cssText = 'position:absolute;visibility:hidden;width:auto;max-width:none;overflow:visible';
    titleNode.parentElement!.append(probe);
    const natural = probe.getBoundingClientRect().width;
    probe.remove();
    return {
      header: { top: headerBox.top, height: headerBox.height },
      title: { width: titleBox.width, natural, visible: titleBox.width > 0 && titleBox.right <= window.innerWidth && getComputedStyle(titleNode).visibility !== 'hidden' },
      controls,
    };
  });
}

function overlaps(first: Box, second: Box): boolean {
  const slack = 0.5;
  return first.x + first.width - slack > second.x && second.x + second.width - slack > first.x && first.y + first.height - slack > second.y && second.y + second.height - slack > first.y;
}

export function checkHeader(found: HeaderMeasure, width: number, state: string): void {
  const where = `${width} px, ${state}`;
  expect(found.title.visible, `title visible at ${where}`).toBe(true);
  expect(found.title.width, `title width at ${where} (its whole width is ${Math.round(found.title.natural)})`).toBeGreaterThanOrEqual(Math.min(found.title.natural, titleRoom(width)) - 1);
  for (const [index, first] of found.controls.entries()) {
    for (const second of found.controls.slice(index + 1)) {
      expect(overlaps(first, second), `${first.name} and ${second.name} overlap at ${where}: ${JSON.stringify([first, second])}`).toBe(false);
    }
  }
  // One row: the title's line and every control share a horizontal band (nothing wrapped below the others).
  const nonTitle = found.controls.filter((box) => box.name !== 'session-title' && box.name !== 'Session profile' && box.name !== 'Backend status' && box.name !== 'Context used');
  const lowestTop = Math.max(...nonTitle.map((box) => box.y));
  const highestBottom = Math.min(...nonTitle.map((box) => box.y + box.height));
  expect(lowestTop, `the header's controls share one row at ${where}: ${JSON.stringify(nonTitle)}`).toBeLessThan(highestBottom);
  for (const box of found.controls) {
    expect(box.y + box.height, `${box.name} inside the header at ${where}`).toBeLessThanOrEqual(found.header.top + found.header.height + 0.5);
    expect(box.x + box.width, `${box.name} inside the window at ${where}`).toBeLessThanOrEqual(width + 0.5);
  }
  if (width < 720) expect(found.header.height, `phone header height at ${where}`).toBeLessThanOrEqual(phoneHeaderLimit);
  else expect(found.header.height, `desktop header height at ${where}`).toBeLessThanOrEqual(64);
}
