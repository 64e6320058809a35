const closedUnknownSession = 4004;
/** What the socket was opened with (a sign-in, a token, a role) ended. */
const closedSignedOut = 4001;
const firstRetryMs = 250;
const longestRetryMs = 8000;

/**
 * A WebSocket to one of the server's paths, reopened whenever it drops with jittered exponential
 * backoff (250 ms doubling to 8 s, ±25 %). Frames are parsed JSON; unparsable ones are dropped.
 * `onStatus` hears 'connecting' | 'open' | 'disconnected', and 'gone' when the server closed it
 * with a code listed in `finalCodes` (it is then not reopened). 'signed-out' (4001) waits for
 * `retryNow()`: the page first finds out who it still is, rather than knock with what ended.
 */
export class ReconnectingSocket {
  #socket;
  #retryTimer;
  #failures = 0;
  #closed = false;

  constructor(path, { onEvent, onStatus, finalCodes = [] }) {
    this.path = path;
    this.onEvent = onEvent;
    this.onStatus = onStatus;
    this.finalCodes = finalCodes;
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
    const socket = new WebSocket(`${scheme}//${location.host}${this.path}`);
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
      if (this.finalCodes.includes(close.code)) {
        this.#closed = true;
        this.onStatus('gone');
        return;
      }
      if (close.code === closedSignedOut) {
        this.onStatus('signed-out');
        return;
      }
      this.onStatus('disconnected');
      const delay = Math.min(longestRetryMs, firstRetryMs * 2 ** this.#failures) * (0.75 + Math.random() * 0.5);
      this.#failures += 1;
      this.#retryTimer = setTimeout(() => this.#open(), delay);
    });
  }
}

/** One session's WebSocket (docs/protocol.md, "The session WebSocket"); 'gone' means the session no longer exists. */
export class SessionConnection extends ReconnectingSocket {
  constructor(sessionId, { onEvent, onStatus }) {
    super(`/ws/sessions/${encodeURIComponent(sessionId)}`, { onEvent, onStatus, finalCodes: [closedUnknownSession] });
    this.sessionId = sessionId;
  }
}
