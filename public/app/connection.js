const closedUnknownSession = 4004;
const firstRetryMs = 250;
const longestRetryMs = 8000;

/**
 * One session's WebSocket (DESIGN §4), reopened with exponential backoff whenever it drops.
 * `onStatus` hears 'connecting' | 'open' | 'disconnected' | 'gone' (the session no longer exists).
 */
export class SessionConnection {
  #socket;
  #retryTimer;
  #failures = 0;
  #closed = false;

  constructor(sessionId, { onEvent, onStatus }) {
    this.sessionId = sessionId;
    this.onEvent = onEvent;
    this.onStatus = onStatus;
    this.#open();
  }

  get isOpen() {
    return this.#socket?.readyState === WebSocket.OPEN;
  }

  /** Sends a command; false when the socket is not open (the caller keeps what it wanted to send). */
  send(command) {
    if (!this.isOpen) return false;
    this.#socket.send(JSON.stringify(command));
    return true;
  }

  /** Reconnects now instead of waiting for the backoff (e.g. when the page becomes visible again). */
  retryNow() {
    if (this.#closed || this.#socket) return;
    clearTimeout(this.#retryTimer);
    this.#open();
  }

  close() {
    this.#closed = true;
    clearTimeout(this.#retryTimer);
    this.#socket?.close(1000);
  }

  #open() {
    this.onStatus('connecting');
    const scheme = location.protocol === 'https:' ? 'wss:' : 'ws:';
    const socket = new WebSocket(`${scheme}//${location.host}/ws/sessions/${encodeURIComponent(this.sessionId)}`);
    this.#socket = socket;
    socket.addEventListener('open', () => {
      this.#failures = 0;
      this.onStatus('open');
    });
    socket.addEventListener('message', (message) => {
      let event;
      try {
        event = JSON.parse(message.data);
      } catch {
        return;
      }
      if (!this.#closed) this.onEvent(event);
    });
    socket.addEventListener('close', (close) => {
      this.#socket = undefined;
      if (this.#closed) return;
      if (close.code === closedUnknownSession) {
        this.#closed = true;
        this.onStatus('gone');
        return;
      }
      this.onStatus('disconnected');
      const delay = Math.min(longestRetryMs, firstRetryMs * 2 ** this.#failures) * (0.75 + Math.random() * 0.5);
      this.#failures += 1;
      this.#retryTimer = setTimeout(() => this.#open(), delay);
    });
  }
}
