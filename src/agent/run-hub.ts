import { isRunEnd, type AgentEvent } from '../protocol/events.ts';

export type EventListener = (event: AgentEvent) => void;

/** Why a run was stopped: the person asked, or the server is shutting down. */
export type StopReason = 'user' | 'shutdown';

interface ActiveRun {
  controller: AbortController;
  /** The run's events so far, for sockets that join mid-run; consecutive deltas are merged. */
  history: AgentEvent[];
}

export type StartResult = { ok: true; signal: AbortSignal; emit: (event: AgentEvent) => void } | { ok: false };

/**
 * Owns which sessions have a run, their stop controllers, and the fan-out of
 * events to every listener (socket) of a session.
 */
export class RunHub {
  private readonly runs = new Map<string, ActiveRun>();
  private readonly listeners = new Map<string, Set<EventListener>>();

  /** `onUnwatched` hears of a session whose last listener left. */
  constructor(private readonly onUnwatched: (sessionId: string) => void = () => {}) {}

  isRunning(sessionId: string): boolean {
    return this.runs.has(sessionId);
  }

  /** Claims the session for a new run, synchronously, so two messages can never both start one. */
  start(sessionId: string): StartResult {
    if (this.runs.has(sessionId)) return { ok: false };
    const run: ActiveRun = { controller: new AbortController(), history: [] };
    this.runs.set(sessionId, run);
    const emit = (event: AgentEvent) => this.emit(sessionId, run, event);
    return { ok: true, signal: run.controller.signal, emit };
  }

  /** Aborts the session's run; false when none is active. The reason reaches the run as its signal's reason. */
  stop(sessionId: string, reason: StopReason = 'user'): boolean {
    const run = this.runs.get(sessionId);
    if (!run) return false;
    run.controller.abort(reason);
    return true;
  }

  /**
   * Adds a listener. It first receives the active run's events so far, or a
   * session_sync when the session is idle, then every live event.
   */
  subscribe(sessionId: string, listener: EventListener): () => void {
    const run = this.runs.get(sessionId);
    if (run) for (const event of run.history) listener(event);
    else listener({ type: 'session_sync', running: false });
    let listeners = this.listeners.get(sessionId);
    if (!listeners) this.listeners.set(sessionId, (listeners = new Set()));
    listeners.add(listener);
    return () => {
      listeners.delete(listener);
      if (listeners.size === 0 && this.listeners.get(sessionId) === listeners) {
        this.listeners.delete(sessionId);
        this.onUnwatched(sessionId);
      }
    };
  }

  /** Whether a listener (a session socket) is watching the session now. */
  isWatched(sessionId: string): boolean {
    return this.listeners.has(sessionId);
  }

  /** An event about one session from outside its run's own work: into the active run's history when it has one, else to its listeners. */
  tell(sessionId: string, event: AgentEvent): void {
    const run = this.runs.get(sessionId);
    if (run) this.emit(sessionId, run, event);
    else this.broadcast(event, sessionId);
  }

  /** Sends an event outside any run (tools_changed, or an error answering one socket's frame). */
  broadcast(event: AgentEvent, sessionId?: string): void {
    const targets = sessionId === undefined ? [...this.listeners.values()] : [this.listeners.get(sessionId) ?? new Set()];
    for (const listeners of targets) for (const listener of listeners) listener(event);
  }

  private emit(sessionId: string, run: ActiveRun, event: AgentEvent): void {
    if (this.runs.get(sessionId) !== run) return;
    remember(run.history, event);
    // The session is free before anyone hears that the run ended, so a reply to that event is never refused as busy.
    if (isRunEnd(event)) this.runs.delete(sessionId);
    for (const listener of this.listeners.get(sessionId) ?? []) listener(event);
  }
}

function remember(history: AgentEvent[], event: AgentEvent): void {
  const last = history.at(-1);
  if (last && (event.type === 'stream_delta' || event.type === 'thinking_delta') && last.type === event.type) {
    history[history.length - 1] = { type: event.type, delta: last.delta + event.delta };
    return;
  }
  history.push(event);
}
