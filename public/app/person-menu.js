import { AccountSection } from './account-section.js';
import { api } from './api.js';
import { element, replaceContent } from './dom.js';
import { icon } from './icons.js';
import { forgetToken } from './login.js';

const roleNames = { owner: 'owner', adult: 'adult', child: 'child', guest: 'guest' };

/**
 * The name of who uses the page, with a menu: sign out of this device or everywhere, the personal
 * API tokens, a Telegram link code. Its button is in the header, and at the foot of the session
 * drawer on a phone, where the header has no room. A one-person Hearth on this machine shows none
 * of it (nobody signs in there); its owner finds the same account in the People panel.
 */
export class PersonMenu {
  #account;
  #opener;

  /** `anchor` holds the header's `button`; `drawerButton` is the drawer's. */
  constructor({ anchor, button, drawerButton, popover }) {
    this.anchor = anchor;
    this.drawerButton = drawerButton;
    this.buttons = [button, drawerButton];
    this.popover = popover;
    for (const each of this.buttons) {
      each.addEventListener('click', () => {
        this.#opener = each;
        if (popover.hidden) this.open();
        else this.close();
      });
    }
    document.addEventListener('keydown', (event) => {
      if (event.key === 'Escape' && !popover.hidden) {
        this.close();
        this.#opener?.focus();
      }
    });
    document.addEventListener('click', (event) => {
      if (!popover.hidden && !popover.contains(event.target) && !this.buttons.some((each) => each.contains(event.target))) this.close();
    });
  }

  /** `me` is GET /me's answer; `shown` says whether the page has anyone to tell apart. */
  show(me, shown) {
    this.me = me;
    this.anchor.hidden = !shown;
    this.drawerButton.hidden = !shown;
    for (const button of this.buttons) {
      // On a narrow header only the icon shows; the name stays in the label.
      button.replaceChildren(icon('person'), element('span', { className: 'person-name' }, me.name));
      button.setAttribute('aria-label', `${me.name}: your account`);
      button.title = `Signed in as ${me.name} (${roleNames[me.role] ?? me.role})`;
    }
    this.#account = new AccountSection(me);
    this.close();
  }

  open() {
    this.popover.hidden = false;
    for (const button of this.buttons) button.setAttribute('aria-expanded', 'true');
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
    for (const button of this.buttons) button.setAttribute('aria-expanded', 'false');
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
