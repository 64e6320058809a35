import { api } from './api.js';

/**
 * Under the open session's title: whether it is shared with the household and whose it is, and
 * for its person a button that shares or unshares it. A one-person Hearth shows neither.
 */
export class SessionSharing {
  #session;

  /** `onChanged()` runs after the session was shared or unshared; `onError(message)` shows a failure. */
  constructor({ mark, toggle, onChanged, onError }) {
    this.mark = mark;
    this.toggle = toggle;
    this.onChanged = onChanged;
    this.onError = onError;
    toggle.addEventListener('click', () => this.#flip());
  }

  /** `session` is the open session's entry of GET /sessions (or undefined with none open); `household` says whether anyone else lives here. */
  show(session, me, household) {
    this.#session = session;
    const mine = session !== undefined && session.owner?.id === me?.id;
    this.mark.hidden = !session?.shared;
    if (session?.shared) this.mark.textContent = mine || !session.owner ? 'Shared with the household' : `${session.owner.name}’s, shared with the household`;
    this.toggle.hidden = !(household && mine);
    this.toggle.textContent = session?.shared ? 'Stop sharing' : 'Share';
    this.toggle.title = session?.shared ? 'Make this session yours alone again' : 'Let everyone in the household whose role may use this profile see and use this session';
  }

  async #flip() {
    const session = this.#session;
    if (!session) return;
    this.toggle.disabled = true;
    try {
      await api.updateSession(session.session_id, { shared: !session.shared });
    } catch (error) {
      this.onError(`Could not change the sharing: ${error.message}`);
      return;
    } finally {
      this.toggle.disabled = false;
    }
    await this.onChanged();
  }
}
