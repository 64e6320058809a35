import { AccountSection } from './account-section.js';
import { api } from './api.js';
import { element, replaceContent } from './dom.js';
import { forgetToken } from './login.js';

const roleNames = { owner: 'owner', adult: 'adult', child: 'child', guest: 'guest' };

/**
 * The header's name of who uses the page, with a menu: sign out of this device or everywhere, the
 * personal API tokens, a Telegram link code. A one-person Hearth on this machine shows none of it
 * (nobody signs in there); its owner finds the same account in the People panel.
 */
export class PersonMenu {
  #account;

  constructor({ anchor, button, popover }) {
    this.anchor = anchor;
    this.button = button;
    this.popover = popover;
    button.addEventListener('click', () => (popover.hidden ? this.open() : this.close()));
    document.addEventListener('keydown', (event) => {
      if (event.key === 'Escape' && !popover.hidden) {
        this.close();
        button.focus();
      }
    });
    document.addEventListener('click', (event) => {
      if (!popover.hidden && !popover.contains(event.target) && !button.contains(event.target)) this.close();
    });
  }

  /** `me` is GET /me's answer; `shown` says whether the page has anyone to tell apart. */
  show(me, shown) {
    this.me = me;
    this.anchor.hidden = !shown;
    this.button.textContent = me.name;
    this.button.setAttribute('aria-label', `${me.name}: your account`);
    this.button.title = `Signed in as ${me.name} (${roleNames[me.role] ?? me.role})`;
    this.#account = new AccountSection(me);
    this.close();
  }

  open() {
    this.popover.hidden = false;
    this.button.setAttribute('aria-expanded', 'true');
    const signOut = (everywhere) => element('button', { type: 'button', onclick: () => this.#signOut(everywhere) }, everywhere ? 'Sign out everywhere' : 'Sign out');
    replaceContent(
      this.popover,
      element('p', { className: 'person-line' }, 'Signed in as ', element('strong', {}, this.me.name), ` · ${roleNames[this.me.role] ?? this.me.role}`),
      element('div', { className: 'sign-out-buttons' }, signOut(false), signOut(true)),
      this.#account.node,
    );
    void this.#account.refresh();
  }

  close() {
    this.popover.hidden = true;
    this.button.setAttribute('aria-expanded', 'false');
  }

  /** Ends this page's sign-in (or every one of this person's), then starts the page again at its sign-in screen. */
  async #signOut(everywhere) {
    try {
      await api.signOut({ everywhere });
    } catch (error) {
      this.popover.append(element('p', { className: 'panel-error', role: 'alert' }, `Could not sign out: ${error.message}`));
      return;
    }
    forgetToken();
    location.replace(location.pathname);
  }
}
