/**
 * The side panels, one open at a time, each opened and closed by the header button whose
 * `aria-controls` names its aside. A panel is `{name, aside, refresh(), onEvent?(event)}`:
 * `refresh()` reads its content when it opens, so content is fetched only when someone looks at
 * it; while it is open, `onEvent(event)` hears what happens in the page (a closed panel hears
 * nothing, as it reads everything again when it opens):
 *
 * - `{type: 'session_opened'}`: another session is open.
 * - `{type: 'profile_changed'}`: the open session's profile changed.
 * - `{type: 'context_changed'}`: the open session's context grew (a turn ended) or was compressed.
 * - `{type: 'tools_changed'}`: the tool set or a profile changed.
 * - `{type: 'models_changed'}`: a model was pulled or deleted (`models_changed` of `/ws/events`).
 * - `{type: 'integration_status', integration}`: an integration connected, dropped or failed (`integration_status` of `/ws/events`).
 * - `{type: 'notification'}`: a notification was raised.
 * - `{type: 'document_status', document}`, `{type: 'document_deleted', id}`: a document the person sees changed (`/ws/events`).
 * - `{type: 'reconnected'}`: the events socket is back after a drop; what was missed should be read again.
 */
export class PanelSwitcher {
  #panels;
  #buttons = new Map();
  #open;

  constructor({ buttons, panels }) {
    this.#panels = panels;
    for (const panel of panels) {
      const button = buttons.find((candidate) => candidate.getAttribute('aria-controls') === panel.aside.id);
      if (!button) throw new Error(`No header button controls the ${panel.name} panel (#${panel.aside.id}).`);
      this.#buttons.set(panel, button);
      button.addEventListener('click', () => this.toggle(panel));
    }
  }

  /** Opens `panel`, or closes it when it is the open one. */
  toggle(panel) {
    this.#open = this.#open === panel ? undefined : panel;
    for (const [each, button] of this.#buttons) {
      button.setAttribute('aria-expanded', String(each === this.#open));
      each.aside.hidden = each !== this.#open;
    }
    document.body.classList.toggle('panel-open', this.#open !== undefined);
    this.#open?.refresh();
  }

  /** Opens `panel`, or reads it again when it is already open. */
  show(panel) {
    if (this.#open !== panel) this.toggle(panel);
    else panel.refresh();
  }

  /** Tells the open panel of something that happened in the page (the events are listed above). */
  notify(event) {
    this.#open?.onEvent?.(event);
  }
}
