import { ApiError, api } from './api.js';
import { SessionConnection } from './connection.js';
import { metrics } from './metrics.js';

const runEnds = new Set(['stream_end', 'stream_stopped']);
const attachedFilesMarker = '\n\nAttached files:\n';

/** The person's decisions on this session's calls that asked, by call id (the stored history does not carry them). */
async function storedDecisions(sessionId) {
  try {
    const { approvals } = await api.approvals({ sessionId });
    const asked = approvals.filter((record) => record.status === 'decided' && record.expires_at !== null && !record.is_subagent);
    return new Map(asked.map((record) => [record.call_id, { subject: record.subject, decision: record.decision, by: record.by, remember: record.remember, decider: record.decider ?? undefined }]));
  } catch {
    return undefined;
  }
}

/** What is drawn from the store while a run is active: up to its user message, and what that run superseded. */
function beforeActiveRun(messages) {
  let last = -1;
  for (let index = messages.length - 1; index >= 0 && last === -1; index -= 1) if (messages[index].role === 'user' && !messages[index].superseded) last = index;
  return messages.filter((message, index) => index <= last || message.superseded);
}

/**
 * One open session: its socket, its transcript and whether it is answering.
 *
 * Whenever the socket (re)opens the view resynchronises: events are held until the first one says
 * whether a run is active, the stored history is read, and then the held events are applied. While
 * a run is active the history is drawn only up to its user message, because the server replays the
 * rest of the run as events; so nothing is drawn twice and nothing is lost across a reconnect.
 */
export class SessionView {
  #connection;
  #held;
  #expectingOwnRun = false;
  #running = false;
  #syncedOnce = false;
  #resolveReady;

  /**
   * `onChange` hears partial state: `{ running, connection, synced, title, profileId, context }`;
   * `onEvent` hears every event after the transcript has (tools_changed, profile_switched…);
   * `emptyPlaceholder()` gives what a session without messages shows.
   */
  constructor({ sessionId, transcript, onChange, onEvent, emptyPlaceholder }) {
    this.sessionId = sessionId;
    this.transcript = transcript;
    this.onChange = onChange;
    this.onEvent = onEvent;
    this.emptyPlaceholder = emptyPlaceholder;
    this.ready = new Promise((resolve) => (this.#resolveReady = resolve));
    this.openedAt = performance.now();
  }

  /** Connects and draws the session; separate from construction so callers hold the view before it reports. */
  open() {
    this.transcript.clear('Loading…');
    this.#connection = this.#connect();
    return this;
  }

  get running() {
    return this.#running;
  }

  get synced() {
    return this.#held === undefined && this.#connection?.isOpen === true;
  }

  /**
   * Whether the composer takes a message now: in sync, or still opening (the message waits for
   * `ready`, so one sent right after *New session* is not lost). After a drop it waits for the reconnection.
   */
  get acceptsMessages() {
    return this.synced || !this.#syncedOnce;
  }

  /** Sends a message; false (and nothing drawn) when the socket is not open, so the composer keeps it. */
  send(message) {
    if (!this.synced || this.#running) return false;
    if (!this.#connection.send({ type: 'message', ...message })) return false;
    this.#expectingOwnRun = true;
    this.transcript.appendUser(message);
    this.#setRunning(true);
    return true;
  }

  /** Answers the last message again; false when the socket is not open or a run is active. */
  regenerate() {
    return this.#rewind({ type: 'regenerate' });
  }

  /**
   * Resends an edited message. A message sent from this page has no id here: `ordinal` (its place among the
   * messages not superseded) finds it in the stored history, which also gives back its attached-files list.
   */
  async edit({ messageId, ordinal, text }) {
    if (!this.synced || this.#running) return false;
    const { messages } = await api.session(this.sessionId);
    const current = messages.filter((message) => message.role === 'user' && !message.superseded);
    const original = messageId === undefined ? current[ordinal] : current.find((message) => message.id === messageId);
    if (!original) return false;
    const attachments = original.content.lastIndexOf(attachedFilesMarker);
    const content = attachments === -1 ? text : text + original.content.slice(attachments);
    return this.#rewind({ type: 'edit', message_id: original.id, content });
  }

  /**
   * The server stores the new branch before the run starts; the run's stream_start then reads the session
   * afresh (as for a run started elsewhere), which draws the superseded messages folded.
   */
  #rewind(frame) {
    if (!this.synced || this.#running) return false;
    if (!this.#connection.send(frame)) return false;
    this.#setRunning(true);
    return true;
  }

  stop() {
    if (this.#connection?.send({ type: 'stop' })) return;
    api.stop(this.sessionId).catch(() => {});
  }

  reconnectNow() {
    this.#connection?.retryNow();
  }

  close() {
    this.#connection?.close();
    this.transcript.scheduler.countFrames(false);
  }

  #connect() {
    return new SessionConnection(this.sessionId, {
      onEvent: (event) => this.#receive(event),
      onStatus: (status) => this.#status(status),
    });
  }

  #reopen() {
    this.#connection.close();
    this.#setRunning(false);
    this.#connection = this.#connect();
  }

  #status(status) {
    if (status === 'open') this.#held = [];
    else if (status === 'disconnected' || status === 'signed-out') this.#held = undefined;
    // A message waiting for the first sync is refused now (send() answers false), so the composer keeps it and says why.
    else if (status === 'gone') this.#resolveReady();
    this.onChange({ connection: status, synced: false });
  }

  #receive(event) {
    const receivedAt = performance.now();
    metrics.eventsReceived += 1;
    metrics.lastEventAt = receivedAt;
    this.#dispatch(event);
    metrics.lastAppliedAt = performance.now();
    metrics.longestApplyMs = Math.max(metrics.longestApplyMs, metrics.lastAppliedAt - receivedAt);
  }

  #dispatch(event) {
    if (event.type === 'tools_changed') return this.onEvent(event);
    if (this.#held) {
      this.#held.push(event);
      if (this.#held.length === 1) this.#resynchronise();
      return;
    }
    if (event.type === 'stream_start' && !this.#expectingOwnRun) {
      // Someone else (another tab, the REST API) started this run: its user message is only in the store.
      this.#held = [event];
      this.#resynchronise();
      return;
    }
    this.#apply(event);
  }

  async #resynchronise() {
    let session;
    const decisions = storedDecisions(this.sessionId);
    try {
      session = await api.session(this.sessionId);
    } catch (error) {
      this.#held = undefined;
      if (error instanceof ApiError && error.code === 'session_not_found') this.onChange({ connection: 'gone' });
      else this.transcript.apply({ type: 'error', code: error.code ?? 'error', message: `Could not load this session: ${error.message}` });
      return;
    }
    const decided = await decisions;
    const held = this.#held ?? [];
    this.#held = undefined;
    const runActive = held.some((event) => event.type === 'stream_start');
    const messages = runActive ? beforeActiveRun(session.messages) : session.messages;
    const drawn = this.transcript.renderHistory(messages, decided);
    if (messages.length === 0 && !runActive) this.transcript.clear(this.emptyPlaceholder?.() ?? 'Say hello — the conversation starts here.');
    if (metrics.lastOpen?.sessionId !== this.sessionId) {
      const open = { sessionId: this.sessionId, messages: session.messages.length, startedAt: this.openedAt, ms: performance.now() - this.openedAt };
      metrics.lastOpen = open;
      drawn.then((complete) => complete && (open.allDrawnMs = performance.now() - this.openedAt));
    }
    this.#expectingOwnRun = false;
    this.#syncedOnce = true;
    this.onChange({ title: session.title, profileId: session.profile_id, synced: true });
    this.#setRunning(false);
    for (const event of held) this.#apply(event);
    this.#resolveReady();
  }

  #apply(event) {
    this.transcript.apply(event);
    if (event.type === 'stream_start') {
      this.#expectingOwnRun = false;
      this.#setRunning(true);
    } else if (runEnds.has(event.type) || (event.type === 'session_sync' && !event.running)) {
      this.#setRunning(false);
    } else if (event.type === 'error' && event.code === 'session_busy') {
      // Another tab's run began just before ours was sent: our message was refused, so draw that run afresh.
      this.#expectingOwnRun = false;
      this.#reopen();
    }
    if (event.type === 'stream_end') this.onChange({ context: { used: event.context_tokens, max: event.max_context_tokens } });
    if (event.type === 'profile_switched') this.onChange({ profileId: event.profile_id });
    this.onEvent(event);
  }

  #setRunning(running) {
    if (this.#running === running) return;
    this.#running = running;
    this.onChange({ running });
  }
}
