import { api } from './api.js';
import { displayTitle, element, formatTime } from './dom.js';
import { icon } from './icons.js';

/**
 * The session list: pinned first, then most recently active (the server's order), filtered by
 * title. Each entry opens its session through the URL hash and can be renamed, pinned or deleted.
 */
export class Sidebar {
  #sessions = [];
  #currentId;
  #renaming;

  /**
   * `onDeleted(id)` runs after a session was deleted, `onRefreshed(sessions)` after the list was
   * read again (titles may have changed), `onError(message)` shows a failure.
   */
  constructor({ list, empty, filter, dialog, profileName, onDeleted, onRefreshed, onError }) {
    this.list = list;
    this.empty = empty;
    this.filter = filter;
    this.dialog = dialog;
    this.profileName = profileName;
    this.onDeleted = onDeleted;
    this.onRefreshed = onRefreshed;
    this.onError = onError;
    filter.addEventListener('input', () => this.render());
  }

  async refresh() {
    try {
      this.#sessions = await api.sessions();
    } catch (error) {
      this.onError(error.message);
      return;
    }
    this.render();
    this.onRefreshed(this.#sessions);
  }

  setCurrent(id) {
    this.#currentId = id;
    for (const link of this.list.querySelectorAll('.session-link')) {
      if (link.closest('li').dataset.sessionId === id) link.setAttribute('aria-current', 'page');
      else link.removeAttribute('aria-current');
    }
  }

  render() {
    const query = this.filter.value.trim().toLowerCase();
    const shown = this.#sessions.filter((session) => displayTitle(session.title).toLowerCase().includes(query));
    this.list.replaceChildren(...shown.map((session) => this.#entry(session)));
    this.empty.hidden = shown.length > 0;
    this.empty.textContent = this.#sessions.length === 0 ? 'No sessions yet.' : 'No session matches.';
  }

  #entry(session) {
    const id = session.session_id;
    const title = displayTitle(session.title);
    const current = id === this.#currentId;
    const label =
      this.#renaming === id
        ? this.#renameInput(session)
        : element(
            'a',
            { className: 'session-link', href: `#${encodeURIComponent(id)}`, 'aria-current': current ? 'page' : null, title },
            element('span', { className: 'session-title' }, session.pinned ? icon('star', { filled: true }) : null, title),
            element('span', { className: 'session-meta' }, `${this.profileName(session.profile_id)} · ${formatTime(session.last_active)}`, session.running ? element('span', { className: 'running-dot', title: 'Answering' }) : null),
          );
    return element(
      'li',
      { dataset: { sessionId: id, pinned: String(session.pinned) }, className: session.pinned ? 'pinned' : '' },
      label,
      element(
        'div',
        { className: 'session-actions' },
        element('button', { type: 'button', className: 'icon-button', 'aria-label': 'Rename', title: 'Rename', onclick: () => this.#startRename(id) }, icon('edit')),
        element(
          'button',
          { type: 'button', className: 'icon-button', 'aria-label': session.pinned ? 'Unpin' : 'Pin', title: session.pinned ? 'Unpin' : 'Pin', onclick: () => this.#setPinned(id, !session.pinned) },
          icon('star', { filled: session.pinned }),
        ),
        element('button', { type: 'button', className: 'icon-button', 'aria-label': 'Delete', title: 'Delete', onclick: () => this.#confirmDelete(session) }, icon('trash')),
      ),
    );
  }

  #renameInput(session) {
    let done = false;
    const input = element('input', { type: 'text', className: 'rename-input', 'aria-label': 'Session title', value: session.title, maxlength: 200 });
    const finish = async (save) => {
      if (done) return;
      done = true;
      this.#renaming = undefined;
      const title = input.value.trim();
      if (save && title !== '' && title !== session.title) {
        try {
          await api.updateSession(session.session_id, { title });
        } catch (error) {
          this.onError(error.message);
        }
        await this.refresh();
      } else this.render();
    };
    input.addEventListener('keydown', (event) => {
      if (event.key === 'Enter') {
        event.preventDefault();
        finish(true);
      } else if (event.key === 'Escape') {
        event.preventDefault();
        finish(false);
      }
    });
    input.addEventListener('blur', () => finish(true));
    queueMicrotask(() => {
      input.focus();
      input.select();
    });
    return input;
  }

  #startRename(id) {
    this.#renaming = id;
    this.render();
  }

  async #setPinned(id, pinned) {
    try {
      await api.updateSession(id, { pinned });
    } catch (error) {
      this.onError(error.message);
    }
    await this.refresh();
  }

  #confirmDelete(session) {
    this.dialog.querySelector('p').textContent = `Delete “${displayTitle(session.title)}”? Its messages and files are removed for good.`;
    this.dialog.returnValue = '';
    this.dialog.addEventListener(
      'close',
      async () => {
        if (this.dialog.returnValue !== 'delete') return;
        try {
          await api.deleteSession(session.session_id);
        } catch (error) {
          this.onError(error.message);
        }
        await this.refresh();
        this.onDeleted(session.session_id);
      },
      { once: true },
    );
    this.dialog.showModal();
  }
}
