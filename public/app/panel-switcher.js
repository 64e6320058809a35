/**
 * The header buttons that open one side panel at a time. `onOpen(name)` runs when a panel opens,
 * so its content is fetched only when someone looks at it.
 */
export class PanelSwitcher {
  #open;

  constructor({ buttons, panels, onOpen }) {
    this.buttons = buttons;
    this.panels = panels;
    this.onOpen = onOpen;
    for (const button of buttons) button.addEventListener('click', () => this.toggle(button.getAttribute('aria-label')));
  }

  get openPanel() {
    return this.#open;
  }

  toggle(name) {
    this.#open = this.#open === name ? undefined : name;
    for (const button of this.buttons) button.setAttribute('aria-expanded', String(button.getAttribute('aria-label') === this.#open));
    for (const [panelName, panel] of Object.entries(this.panels)) panel.hidden = panelName !== this.#open;
    document.body.classList.toggle('panel-open', this.#open !== undefined);
    if (this.#open) this.onOpen(this.#open);
  }
}
