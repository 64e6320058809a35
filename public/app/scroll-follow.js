import { element } from './dom.js';

/** Within this many pixels of the end counts as at the end (fractional scroll positions under zoom). */
const atEndPx = 2;

/**
 * Keeps a scrolling box at its end while new content arrives, unless the person scrolled up on
 * purpose; then a *Jump to latest* button under the box counts the items that arrived meanwhile.
 *
 * Whether to follow is decided by the person's scrolling, not measured when content arrives: a
 * tool card that opens its result, an image that loads or a taller composer grow the box without
 * a scroll, and measuring then would stop following for good. Only a scroll that moves up and ends
 * away from the end stops following; reaching the end again resumes it.
 */
export class ScrollFollow {
  #following = true;
  #lastTop = 0;
  #unseen = 0;

  constructor(box) {
    this.box = box;
    this.count = element('span', { className: 'jump-count' });
    this.button = element('button', { type: 'button', className: 'jump-to-latest', hidden: true, onclick: () => this.toEnd() }, 'Jump to latest', this.count);
    box.after(element('div', { className: 'jump-anchor' }, this.button));
    box.addEventListener('scroll', () => this.#scrolled(), { passive: true });
    // The box's own size changes (the composer grows, the keyboard opens on a phone), or its content's.
    const resized = new ResizeObserver(() => this.keep());
    resized.observe(box);
    box.addEventListener('load', () => this.keep(), true);
  }

  get following() {
    return this.#following;
  }

  /** New content went in: the box stays at its end when following, else the new items are counted. */
  added(items = 1) {
    if (this.#following) this.keep();
    else {
      this.#unseen += items;
      this.#showButton();
    }
  }

  /** Content grew or changed in place: stay at the end when following. */
  keep() {
    if (this.#following) this.#scrollToEnd();
  }

  /** Brings the end into view and follows again (the person's own message, the button, a freshly drawn session). */
  toEnd() {
    this.#following = true;
    this.#unseen = 0;
    this.#showButton();
    this.#scrollToEnd();
  }

  #scrollToEnd() {
    this.box.scrollTop = this.box.scrollHeight;
    this.#lastTop = this.box.scrollTop;
  }

  #scrolled() {
    const { scrollTop, scrollHeight, clientHeight } = this.box;
    if (scrollHeight - scrollTop - clientHeight <= atEndPx) {
      this.#following = true;
      this.#unseen = 0;
    } else if (scrollTop < this.#lastTop) this.#following = false;
    this.#lastTop = scrollTop;
    this.#showButton();
  }

  #showButton() {
    this.button.hidden = this.#following;
    this.button.dataset.unseen = String(this.#unseen);
    this.count.textContent = this.#unseen > 0 ? ` · ${this.#unseen} new` : '';
  }
}
