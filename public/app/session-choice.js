import { element } from './dom.js';
import { icon } from './icons.js';

/**
 * How the header's second line shows the profile, the model and the backend's status, roomiest
 * first: the first whose every word fits is shown. `inline`: the two selects and the whole status;
 * else the status's dot and one button, naming the profile and the model (`named`), or the profile
 * (`profile`), or showing only an icon (`icon`), whose menu holds the selects and the whole status.
 */
const fits = ['inline', 'named', 'profile', 'icon'];

/**
 * The session's profile and model in the header, never cut short: the selects inline while the
 * heading has room for them, else one labelled button with a menu that reads them in full. The
 * subtitle's `data-fit` says which; the CSS lays each out.
 */
export class SessionChoice {
  #width = -1;
  #fitQueued = false;

  constructor({ subtitle, menu, status }) {
    this.subtitle = subtitle;
    this.menu = menu;
    this.status = status;
    this.statusLine = element('p', { className: 'session-choice-status' });
    menu.append(this.statusLine);
    this.profileLabel = element('span', { className: 'session-choice-profile' });
    this.modelLabel = element('span', { className: 'session-choice-model' });
    this.button = element(
      'button',
      { type: 'button', className: 'session-choice', dataset: { role: 'session-choice' }, 'aria-expanded': 'false', 'aria-controls': menu.id, title: 'The profile and model of this conversation' },
      icon('sliders'),
      element('span', { className: 'visually-hidden' }, 'Profile and model: '),
      this.profileLabel,
      this.modelLabel,
      icon('chevron'),
    );
    subtitle.prepend(this.button);
    this.button.addEventListener('click', () => (this.isOpen ? this.close() : this.open()));
    document.addEventListener('keydown', (event) => {
      if (event.key !== 'Escape' || !this.isOpen) return;
      // This Escape closes the menu; it does not also stop a running answer (composer.js).
      event.preventDefault();
      this.close();
      this.button.focus();
    });
    document.addEventListener('click', (event) => {
      if (this.isOpen && !menu.contains(event.target) && !this.button.contains(event.target)) this.close();
    });
    // The heading's width decides what fits; the fitting itself runs outside the observer's callback.
    new ResizeObserver(([entry]) => {
      if (entry.contentRect.width !== this.#width) this.fitSoon();
    }).observe(subtitle.parentElement);
    // So does what the line holds: a name, the status's words, a select shown or the sharing mark.
    new MutationObserver(() => this.fitSoon()).observe(subtitle, { subtree: true, childList: true, characterData: true, attributeFilter: ['hidden'] });
    document.fonts?.ready.then(() => this.fitSoon());
  }

  get isOpen() {
    return this.button.getAttribute('aria-expanded') === 'true';
  }

  /** What the button names: the profile's name and the model in use (empty while unknown). */
  show({ profile, model }) {
    this.profileLabel.textContent = profile;
    this.modelLabel.textContent = profile && model ? ` · ${model}` : model;
    this.refresh();
  }

  /** The selects or the status changed: the menu's status line follows, and what fits is found again. */
  refresh() {
    this.statusLine.textContent = this.status.textContent;
    this.statusLine.dataset.state = this.status.dataset.state ?? '';
    this.fitSoon();
  }

  fitSoon() {
    if (this.#fitQueued) return;
    this.#fitQueued = true;
    requestAnimationFrame(() => {
      this.#fitQueued = false;
      this.fit();
    });
  }

  /** Shows the roomiest layout whose every box fits the heading. */
  fit() {
    this.#width = this.subtitle.parentElement.getBoundingClientRect().width;
    const chosen = fits.find((fit) => {
      this.subtitle.dataset.fit = fit;
      return this.#fitsNow();
    });
    this.subtitle.dataset.fit = chosen ?? fits.at(-1);
    if (this.subtitle.dataset.fit === 'inline') this.close();
    else if (this.isOpen) this.#place();
  }

  open() {
    this.button.setAttribute('aria-expanded', 'true');
    this.menu.dataset.open = 'true';
    this.#place();
    this.menu.querySelector('select:not([hidden])')?.focus();
  }

  close() {
    this.button.setAttribute('aria-expanded', 'false');
    delete this.menu.dataset.open;
  }

  /** Nothing on the line shrinks (see the CSS), so anything too wide shows as the line's overflow. */
  #fitsNow() {
    return this.subtitle.scrollWidth <= this.subtitle.clientWidth + 0.5;
  }

  /** Under the button, inside the window. */
  #place() {
    const header = this.menu.offsetParent ?? document.body;
    const headerBox = header.getBoundingClientRect();
    const buttonBox = this.button.getBoundingClientRect();
    const room = window.innerWidth - 8;
    const width = this.menu.getBoundingClientRect().width;
    const left = Math.max(8, Math.min(buttonBox.left, room - width));
    this.menu.style.left = `${left - headerBox.left}px`;
    this.menu.style.top = `${buttonBox.bottom - headerBox.top + 4}px`;
  }
}
