import { api } from './api.js';
import { displayTitle, element, formatTime } from './dom.js';
import { icon } from './icons.js';

const refreshDelayMs = 150;

const approvalsLabel = (count) => `${count} approval${count === 1 ? '' : 's'} waiting`;

/**
 * The session list: pinned first, then most recently active (the server's order), filtered by
 * title. Each entry opens its session through the URL hash and can be renamed, pinned or deleted,
 * and carries a badge while tool calls of that session wait for the person's approval.
 *
 * The list follows changes made elsewhere, so it is drawn again often: entries whose content did
 * not change are kept as they are, so focus, hover and a rename in progress survive a redraw.
 */
export class Sidebar {
  #sessions = [];
  #currentId;
  #renaming;
  #approvals = new Map();
  #drawn = new WeakMap();
  #refreshTimer;
  #refreshing;
  #deleting = new Set();

  /**
   * `openButton` opens the list as a drawer on a phone. `onDeleted(id)` runs after a session was
   * deleted, `onRefreshed(sessions)` after the list was read again (titles may have changed),
   * `onError(message)` shows a failure.
   */
  /**
   * In a household, `sharingLabel(session)` names a shared session's sharing ('' when not shared),
   * `isOwn(session)` says whether it is the viewer's (only its person renames, shares or deletes
   * it) and `mayShare()` whether anyone else lives here to share with.
   */
  constructor({ list, empty, filter, dialog, openButton, profileName, sharingLabel = () => '', isOwn = () => true, mayShare = () => false, onDeleted, onRefreshed, onError }) {
    this.list = list;
    this.empty = empty;
    this.filter = filter;
    this.dialog = dialog;
    this.openButton = openButton;
    this.profileName = profileName;
    this.sharingLabel = sharingLabel;
    this.isOwn = isOwn;
    this.mayShare = mayShare;
    this.onDeleted = onDeleted;
    this.onRefreshed = onRefreshed;
    this.onError = onError;
    filter.addEventListener('input', () => this.render());
  }

  async refresh() {
    clearTimeout(this.#refreshTimer);
    this.#refreshTimer = undefined;
    // Answers are applied in the order they were asked for, so an older list never replaces a newer one.
    const previous = this.#refreshing;
    const request = api.sessions();
    const refreshing = (async () => {
      let sessions;
      try {
        sessions = await request;
      } catch (error) {
        await previous;
        this.onError(error.message);
        return;
      }
      await previous;
      this.#sessions = sessions;
      this.render();
      this.onRefreshed(this.#sessions);
    })();
    this.#refreshing = refreshing.finally(() => {
      if (this.#refreshing === refreshing) this.#refreshing = undefined;
    });
    return refreshing;
  }

  /** Reads the list again shortly; changes that come in bursts (a run starting, its title, its end) cost one request. */
  refreshSoon() {
    this.#refreshTimer ??= setTimeout(() => this.refresh(), refreshDelayMs);
  }

  /** Waiting approvals anywhere, `[{session_id, …}]`: each session shows how many of its calls wait. */
  setPendingApprovals(pending) {
    this.#approvals = new Map();
    for (const approval of pending) this.#approvals.set(approval.session_id, (this.#approvals.get(approval.session_id) ?? 0) + 1);
    this.render();
    this.#showApprovalsElsewhere();
  }

  /** On a phone the list is behind the open button: a dot on it says another session waits for a decision. */
  #showApprovalsElsewhere() {
    let count = 0;
    for (const [id, waiting] of this.#approvals) if (id !== this.#currentId) count += waiting;
    if (count === 0) {
      delete this.openButton.dataset.approvals;
      this.openButton.removeAttribute('aria-description');
      return;
    }
    this.openButton.dataset.approvals = String(count);
    this.openButton.setAttribute('aria-description', `${approvalsLabel(count)} in other sessions`);
  }

  /** Whether this page is deleting the session right now (its deletion is then no news to the page). */
  isDeleting(id) {
    return this.#deleting.has(id);
  }

  /** How many approvals the session waits for. */
  pendingApprovals(id) {
    return this.#approvals.get(id) ?? 0;
  }

  setCurrent(id) {
    this.#currentId = id;
    for (const link of this.list.querySelectorAll('.session-link')) {
      if (link.closest('li').dataset.sessionId === id) link.setAttribute('aria-current', 'page');
      else link.removeAttribute('aria-current');
    }
    this.#showApprovalsElsewhere();
  }

  render() {
    const query = this.filter.value.trim().toLowerCase();
    const shown = this.#sessions.filter((session) => displayTitle(session.title).toLowerCase().includes(query));
    const existing = new Map([...this.list.children].map((item) => [item.dataset.sessionId, item]));
    const wanted = shown.map((session) => {
      const look = this.#look(session);
      const old = existing.get(session.session_id);
      if (old && this.#drawn.get(old) === look) return old;
      const item = this.#entry(session);
      this.#drawn.set(item, look);
      return item;
    });
    // Only entries out of place move, so a focused entry stays put (and focused) when others come and go.
    let cursor = this.list.firstElementChild;
    for (const item of wanted) {
      if (item === cursor) cursor = cursor.nextElementSibling;
      else this.list.insertBefore(item, cursor);
    }
    while (cursor) {
      const next = cursor.nextElementSibling;
      cursor.remove();
      cursor = next;
    }
    this.empty.hidden = shown.length > 0;
    this.empty.textContent = this.#sessions.length === 0 ? 'No sessions yet.' : 'No session matches.';
  }

  /** Everything an entry shows; an entry is drawn again only when this changes. */
  #look(session) {
    const id = session.session_id;
    if (this.#renaming === id) return `renaming ${id}`;
    return JSON.stringify([
      session.title,
      session.pinned,
      this.profileName(session.profile_id),
      formatTime(session.last_active),
      session.running,
      id === this.#currentId,
      this.pendingApprovals(id),
      this.sharingLabel(session),
      this.isOwn(session),
      this.mayShare(),
    ]);
  }

  #entry(session) {
    const id = session.session_id;
    const title = displayTitle(session.title);
    const current = id === this.#currentId;
    const waiting = this.pendingApprovals(id);
    const sharing = this.sharingLabel(session);
    const own = this.isOwn(session);
    const label =
      this.#renaming === id
        ? this.#renameInput(session)
        : element(
            'a',
            { className: 'session-link', href: `#${encodeURIComponent(id)}`, 'aria-current': current ? 'page' : null, title },
            element(
              'span',
              { className: 'session-title-row' },
              element('span', { className: 'session-title' }, session.pinned ? icon('star', { filled: true }) : null, title),
              session.origin ? element('span', { className: 'origin-mark', title: `From ${originName(session.origin)}`, 'aria-label': `From ${originName(session.origin)}` }, originName(session.origin)) : null,
              waiting > 0 ? element('span', { className: 'approval-badge', role: 'img', 'aria-label': approvalsLabel(waiting), title: approvalsLabel(waiting) }, String(waiting)) : null,
            ),
            element('span', { className: 'session-meta' }, `${this.profileName(session.profile_id)} · ${formatTime(session.last_active)}`, sharing ? element('span', { className: 'shared-label', dataset: { role: 'shared' } }, sharing) : null, session.running ? element('span', { className: 'running-dot', title: 'Answering' }) : null),
          );
    return element(
      'li',
      { dataset: { sessionId: id, pinned: String(session.pinned) }, className: session.pinned ? 'pinned' : '' },
      label,
      element(
        'div',
        { className: 'session-actions' },
        own && element('button', { type: 'button', className: 'icon-button', 'aria-label': 'Rename', title: 'Rename', onclick: () => this.#startRename(id) }, icon('edit')),
        own &&
          element(
            'button',
            { type: 'button', className: 'icon-button', 'aria-label': session.pinned ? 'Unpin' : 'Pin', title: session.pinned ? 'Unpin' : 'Pin', onclick: () => this.#setPinned(id, !session.pinned) },
            icon('star', { filled: session.pinned }),
          ),
        own &&
          this.mayShare() &&
          element(
            'button',
            {
              type: 'button',
              className: 'icon-button',
              'aria-label': session.shared ? 'Stop sharing' : 'Share with the household',
              title: session.shared ? 'Stop sharing: yours alone again' : 'Share with the household: everyone whose role may use its profile sees and uses it',
              onclick: () => this.#setShared(id, !session.shared),
            },
            icon('share', { filled: session.shared }),
          ),
        own && element('button', { type: 'button', className: 'icon-button', 'aria-label': 'Delete', title: 'Delete', onclick: () => this.#confirmDelete(session) }, icon('trash')),
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

  async #setShared(id, shared) {
    try {
      await api.updateSession(id, { shared });
    } catch (error) {
      this.onError(error.message);
    }
    await this.refresh();
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
        this.#deleting.add(session.session_id);
        try {
          await api.deleteSession(session.session_id);
        } catch (error) {
          this.onError(error.message);
        }
        await this.refresh();
        this.onDeleted(session.session_id);
        this.#deleting.delete(session.session_id);
      },
      { once: true },
    );
    this.dialog.showModal();
  }
}

/** A channel's name as people know it (`telegram` → Telegram). */
/** Origins whose name is not their id capitalised: sessions of the OpenAI-compatible front door (docs/openai-compatible.md). */
const originNames = { openai: 'OpenAI API' };

function originName(origin) {
  return originNames[origin] ?? origin.charAt(0).toUpperCase() + origin.slice(1);
}
