import { ReconnectingSocket } from './connection.js';

/**
 * The page's events socket `/ws/events` (docs/protocol.md, "The events socket"): what concerns the whole Hearth rather than
 * the open session. Reconnects like a session socket; each (re)connection starts with `hello`.
 *
 * - `onApprovals(pending)`: every waiting approval anywhere, `[{session_id, call_id, tool, subject, expires_at}]`
 *   (from `hello` and `approvals_changed`).
 * - `onSessionsChanged({session_id, change})`: the session list changed somewhere.
 * - `onToolsChanged()`: the tool set or a profile changed.
 * - `onProfilesChanged()`: a profile file was added, edited, renamed or removed.
 * - `onBackendStatus(status)`: which backend and model, and whether they answer (from `hello` and `backend_status`).
 * - `onIntegrationStatus({name, status, message?, details})`: Home Assistant, MQTT or another integration connected, dropped or failed.
 * - `onReconnected()`: a `hello` after a drop; whatever was missed meanwhile should be read again.
 * - `onStatus(status)`: as ReconnectingSocket's.
 * - `onUnreadNotifications(count)`: how many notifications are unread (from `hello`).
 * - `onNotification({id, title, body, session_id?, created_at})`: a notification was raised.
 * - `onModelPulls(pulls)`: the model pulls running now, `[{name, status, completed?, total?, state, error?}]` (from `hello`).
 * - `onModelPull(pull)`: one pull moved or ended (`model_pull`).
 * - `onModelsChanged()`: a model was pulled or deleted; lists of models should be read again.
 * - `onModelLoading({name, state, error?})`: Ollama is loading a model (`loading`), or finished (`loaded`, `failed`).
 * - `onDocumentStatus(document)`: a document the person sees was added, or its indexing moved on, finished or failed.
 * - `onDocumentDeleted(id)`: a document the person sees was deleted.
 */
export class HearthEvents {
  #socket;
  #greeted = false;

  constructor({ onApprovals, onSessionsChanged, onToolsChanged, onProfilesChanged = () => {}, onBackendStatus = () => {}, onIntegrationStatus = () => {}, onUnreadNotifications = () => {}, onNotification = () => {}, onModelPulls = () => {}, onModelPull = () => {}, onModelsChanged = () => {}, onModelLoading = () => {}, onDocumentStatus = () => {}, onDocumentDeleted = () => {}, onReconnected, onStatus = () => {} }) {
    this.handlers = { onApprovals, onSessionsChanged, onToolsChanged, onProfilesChanged, onBackendStatus, onIntegrationStatus, onUnreadNotifications, onNotification, onModelPulls, onModelPull, onModelsChanged, onModelLoading, onDocumentStatus, onDocumentDeleted, onReconnected };
    this.#socket = new ReconnectingSocket('/ws/events', { onEvent: (event) => this.#receive(event), onStatus });
  }

  retryNow() {
    this.#socket.retryNow();
  }

  close() {
    this.#socket.close();
  }

  #receive(event) {
    switch (event?.type) {
      case 'hello':
        this.handlers.onApprovals(event.pending_approvals ?? []);
        this.handlers.onBackendStatus(event.backend);
        if (typeof event.unread_notifications === 'number') this.handlers.onUnreadNotifications(event.unread_notifications);
        this.handlers.onModelPulls(Array.isArray(event.model_pulls) ? event.model_pulls : []);
        if (this.#greeted) this.handlers.onReconnected();
        this.#greeted = true;
        return;
      case 'backend_status':
        this.handlers.onBackendStatus(event.backend);
        return;
      case 'integration_status':
        this.handlers.onIntegrationStatus(event);
        return;
      case 'approvals_changed':
        this.handlers.onApprovals(event.pending ?? []);
        return;
      case 'notification':
        this.handlers.onNotification(event);
        return;
      case 'sessions_changed':
        this.handlers.onSessionsChanged(event);
        return;
      case 'tools_changed':
        this.handlers.onToolsChanged();
        return;
      case 'profiles_changed':
        this.handlers.onProfilesChanged();
        return;
      case 'model_pull':
        this.handlers.onModelPull(event);
        return;
      case 'models_changed':
        this.handlers.onModelsChanged();
        return;
      case 'model_loading':
        this.handlers.onModelLoading(event);
        return;
      case 'document_status':
        this.handlers.onDocumentStatus(event.document);
        return;
      case 'document_deleted':
        this.handlers.onDocumentDeleted(event.id);
        return;
      default:
        return;
    }
  }
}
