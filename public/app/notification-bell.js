import { api } from './api.js';
import { element, formatTime, replaceContent } from './dom.js';
import { markdownToPlainText, renderMarkdown } from './markdown.js';

const listLimit = 50;
/** Hearth serves its own docs (src/server/docs-routes.ts), so the link works from a phone too. */
const httpsHelp = '/docs/operations.md#https-for-the-phone';

/**
 * The header's bell (docs/agent.md, "Schedules, reminders and notifications"): the unread count, from the events socket's `hello` and each
 * `notification` frame, and a list of the newest notifications, each opening its session and
 * marking itself read. Browser notifications are shown only once the person allowed them with the
 * list's "Allow" button; the page never asks on its own.
 */
export class NotificationBell {
  #unread = 0;
  #notifications = [];

  /** `button` opens and closes `popover`; `openSession(sessionId)` shows a session. */
  constructor({ button, count, popover, openSession }) {
    this.button = button;
    this.count = count;
    this.popover = popover;
    this.openSession = openSession;
    button.addEventListener('click', () => (this.popover.hidden ? this.open() : this.close()));
    document.addEventListener('keydown', (event) => {
      if (event.key === 'Escape' && !this.popover.hidden) this.close();
    });
    document.addEventListener('click', (event) => {
      if (!this.popover.hidden && !this.popover.contains(event.target) && !this.button.contains(event.target)) this.close();
    });
    this.#showCount();
  }

  get unread() {
    return this.#unread;
  }

  /** The server's count (from `hello`, also after a reconnection). */
  setUnread(count) {
    this.#unread = count;
    this.#showCount();
    if (!this.popover.hidden) this.#load();
  }

  /** A `notification` frame: counted, listed when the list is open, and shown by the browser when allowed. */
  receive(notification) {
    this.#unread += 1;
    this.#showCount();
    this.#notifications = [{ ...notification, read: false }, ...this.#notifications.filter((known) => known.id !== notification.id)].slice(0, listLimit);
    if (!this.popover.hidden) this.#render();
    this.#showInBrowser(notification);
  }

  async open() {
    this.popover.hidden = false;
    this.button.setAttribute('aria-expanded', 'true');
    this.#render();
    await this.#load();
  }

  close() {
    this.popover.hidden = true;
    this.button.setAttribute('aria-expanded', 'false');
  }

  async #load() {
    // The list is drawn at once from what is known, then again when the server answers: `data-state` tells which.
    this.popover.dataset.state = 'loading';
    try {
      const answer = await api.notifications({ limit: listLimit });
      this.#notifications = answer.notifications;
      this.#unread = answer.unread_count;
      this.#showCount();
    } catch (error) {
      this.#render(error.message);
      return;
    } finally {
      this.popover.dataset.state = 'loaded';
    }
    this.#render();
  }

  #showCount() {
    this.count.textContent = this.#unread > 99 ? '99+' : String(this.#unread);
    this.count.hidden = this.#unread === 0;
    this.button.dataset.unread = String(this.#unread);
    this.button.setAttribute('aria-label', this.#unread === 0 ? 'Notifications' : `Notifications, ${this.#unread} unread`);
  }

  #render(failure) {
    const newestFirst = [...this.#notifications].sort((first, second) => String(second.created_at).localeCompare(String(first.created_at)) || second.id - first.id);
    replaceContent(
      this.popover,
      element(
        'header',
        { className: 'notification-header' },
        element('h2', {}, 'Notifications'),
        element('button', { type: 'button', className: 'mark-all-read', disabled: this.#unread === 0, onclick: () => this.#markAllRead() }, 'Mark all read'),
      ),
      this.#permissionControl(),
      failure && element('p', { className: 'panel-error', role: 'alert' }, failure),
      newestFirst.length === 0
        ? element('p', { className: 'muted notification-empty' }, 'No notifications yet. Schedules, heartbeat findings and approvals waiting in unwatched runs show up here.')
        : element('ul', { className: 'notification-list', 'aria-label': 'Notifications' }, newestFirst.map((notification) => this.#item(notification))),
    );
  }

  /**
   * The title is the item's button; the body is the notification's Markdown, sanitised like an answer,
   * beside it rather than inside it (a button holds no blocks, links or copy buttons). A click on the
   * body opens the notification too, unless it was on a link or button of its own.
   */
  #item(notification) {
    const unread = !notification.read && !notification.read_at;
    const item = element(
      'li',
      { className: 'notification-entry', dataset: { notificationId: String(notification.id), read: String(!unread) } },
      element('button', { type: 'button', className: 'notification-item', onclick: () => this.#choose(notification) }, element('span', { className: 'notification-title' }, notification.title)),
      notification.body && element('div', { className: 'notification-body markdown' }, notificationBody(notification.body)),
      element('time', { className: 'notification-time', datetime: notification.created_at }, formatTime(notification.created_at)),
    );
    item.addEventListener('click', (event) => {
      if (!event.target.closest('a, button')) this.#choose(notification);
    });
    return item;
  }

  /** A click: the notification is read and its session, if it has one, opens. */
  async #choose(notification) {
    this.close();
    if (notification.session_id) this.openSession(notification.session_id);
    if (notification.read || notification.read_at) return;
    notification.read = true;
    this.#unread = Math.max(0, this.#unread - 1);
    this.#showCount();
    try {
      await api.markNotificationRead(notification.id);
    } catch {
      notification.read = false;
      this.#unread += 1;
      this.#showCount();
    }
  }

  async #markAllRead() {
    try {
      await api.markAllNotificationsRead();
    } catch (error) {
      this.#render(error.message);
      return;
    }
    for (const notification of this.#notifications) notification.read = true;
    this.#unread = 0;
    this.#showCount();
    this.#render();
  }

  /** Offered only while the browser has not been answered; asking happens on this click, never on load. */
  #permissionControl() {
    // Over plain HTTP to a LAN address browsers turn notifications off without asking: say why, not "blocked".
    if (!window.isSecureContext) {
      return element(
        'p',
        { className: 'muted notification-permission', dataset: { reason: 'needs-https' } },
        'Browser notifications need HTTPS. ',
        element('a', { href: httpsHelp, target: '_blank', rel: 'noopener' }, 'How to reach Hearth over HTTPS'),
      );
    }
    if (!('Notification' in window)) return undefined;
    if (Notification.permission === 'granted') return element('p', { className: 'muted notification-permission' }, 'Browser notifications are on while this page is in the background.');
    if (Notification.permission === 'denied') return element('p', { className: 'muted notification-permission' }, 'Browser notifications are blocked for this site.');
    return element(
      'p',
      { className: 'notification-permission' },
      element(
        'button',
        {
          type: 'button',
          className: 'allow-notifications',
          onclick: async () => {
            await Notification.requestPermission();
            this.#render();
          },
        },
        'Allow browser notifications',
      ),
    );
  }

  #showInBrowser(notification) {
    if (!('Notification' in window) || Notification.permission !== 'granted' || document.hasFocus()) return;
    const shown = new Notification(notification.title, { body: markdownToPlainText(notification.body ?? ''), tag: `hearth-${notification.id}` });
    shown.addEventListener('click', () => {
      window.focus();
      this.#choose(notification);
      shown.close();
    });
  }
}

/** The body's Markdown, rendered like an answer's, without the code blocks' copy buttons (the list is for reading). */
function notificationBody(markdown) {
  const fragment = renderMarkdown(markdown);
  for (const toolbar of fragment.querySelectorAll('.code-toolbar')) toolbar.remove();
  return fragment;
}
