import { inCallLane, type CallLane } from '../llm/call-lane.ts';
import type { ToolContext } from '../tools/tool.ts';
import type { AgentEvent } from '../protocol/events.ts';
import type { HearthEventHub } from '../events/hearth-events.ts';
import type { Notifications } from '../events/notifications.ts';
import type { EventListener } from './run-hub.ts';
import { RunHub } from './run-hub.ts';
import type { AgentDependencies } from './dependencies.ts';
import type { AgentRuns, SendResult } from './agent-runs.ts';
import { notifyUnwatchedApprovals } from './unwatched-approvals.ts';
import { runTurn, type SessionBackgroundWork, type TurnOutcome, type TurnPorts, type TurnRequest, type UserInput } from './turn.ts';
import { turnPorts } from './turn-ports.ts';
import { messageOf } from '../failure.ts';

interface BackgroundTask {
  done: Promise<void>;
  controller: AbortController;
}

/** What the agent publishes to, built once for the whole app (`createDependencies`). */
export interface AgentHubs {
  events: HearthEventHub;
  /** Raised when an approval waits in a session nobody watches (docs/agent.md, "Notifications"). */
  notifications: Notifications;
}

/** The agent as the server sees it: start a turn, stop it, watch a session's events. */
export class Agent implements AgentRuns {
  private readonly hub = new RunHub((sessionId) => this.sessionUnwatched(sessionId));
  private readonly sessionUnwatched: (sessionId: string) => void;
  private readonly turns = new Map<string, Promise<TurnOutcome>>();
  /** Post-turn work per session (compression); it never holds up the answer, and the next turn waits for it. */
  private readonly background = new Map<string, BackgroundTask>();

  /** The app-wide hub (docs/protocol.md, "The events socket"): the agent announces sessions, profiles, tools and approvals on it. */
  private readonly events: HearthEventHub;
  /** What each turn runs on, made once from the dependencies. */
  private readonly ports: TurnPorts;

  constructor(
    private readonly deps: AgentDependencies,
    hubs: AgentHubs,
  ) {
    this.events = hubs.events;
    this.ports = turnPorts(deps);
    deps.approvals.on('changed', () => this.events.publish({ type: 'approvals_changed', pending: deps.approvals.pending() }));
    this.sessionUnwatched = notifyUnwatchedApprovals({ db: deps.db, approvals: deps.approvals, notifications: hubs.notifications, isWatched: (sessionId) => this.hub.isWatched(sessionId), logger: deps.logger });
  }

  /** Starts a turn in the background; refused while the session already has one. */
  send(sessionId: string, input: UserInput, by?: string): SendResult {
    return this.start(sessionId, { type: 'message', input }, by);
  }

  /** Answers the last user message again; the old answer stays in the display, superseded (docs/agent.md, "Branches: regenerate and edit"). */
  regenerate(sessionId: string, by?: string): SendResult {
    return this.start(sessionId, { type: 'regenerate' }, by);
  }

  /** Replaces a user message (by its display id) and answers it; what followed it stays in the display, superseded. */
  edit(sessionId: string, messageId: number, content: string, by?: string): SendResult {
    return this.start(sessionId, { type: 'edit', messageId, content }, by);
  }

  private start(sessionId: string, request: TurnRequest, by?: string): SendResult {
    const started = this.hub.start(sessionId);
    if (!started.ok) return { ok: false, code: 'session_busy' };
    const context: ToolContext = { sessionId, signal: started.signal, emit: started.emit, isSubagent: false, ...(by !== undefined && { askedBy: by }) };
    const background = this.backgroundWork(sessionId);
    const callLane: CallLane = {
      lane: request.type === 'message' && request.input.unattended ? 'background' : 'interactive',
      onQueued: (queued) => started.emit({ type: 'run_status', status: queued ? 'queued' : 'running' }),
    };
    const turn = () => runTurn(sessionId, request, this.ports, context, background, (change) => this.sessionChanged(sessionId, change));
    const outcome = inCallLane(callLane, turn).catch((error: unknown) => {
      this.deps.logger.error({ err: error, sessionId }, 'turn failed');
      const message = `Internal error: ${messageOf(error)}`;
      started.emit({ type: 'error', code: 'internal_error', message });
      started.emit({ type: 'session_sync', running: false });
      return { status: 'failed', content: '', error: { code: 'llm_error', message } } satisfies TurnOutcome;
    });
    this.turns.set(sessionId, outcome);
    void outcome.finally(() => {
      if (this.turns.get(sessionId) === outcome) this.turns.delete(sessionId);
      this.sessionChanged(sessionId, 'updated');
    });
    return { ok: true, outcome };
  }

  /** Stops the session's run and background work, waits for them to settle, and has the tools release the session (it is being deleted). */
  async forget(sessionId: string): Promise<void> {
    this.hub.stop(sessionId);
    await this.turns.get(sessionId);
    // Read after the turn: a turn that finished as it was stopped may just have started its compression.
    const background = this.background.get(sessionId);
    background?.controller.abort();
    await background?.done;
    await Promise.all(this.deps.tools.list().map((tool) => tool.releaseSession?.(sessionId)));
  }

  /** Tells every open page that the session list changed. */
  sessionChanged(sessionId: string, change: 'created' | 'updated' | 'deleted'): void {
    this.events.publish({ type: 'sessions_changed', session_id: sessionId, change });
  }

  tell(sessionId: string, event: AgentEvent): void {
    this.hub.tell(sessionId, event);
  }

  /** Profile files changed (added, edited, renamed, removed): every open page refreshes its pickers. */
  announceProfiles(): void {
    this.events.publish({ type: 'profiles_changed', profiles: this.deps.profiles.list().map((profile) => ({ id: profile.id, name: profile.name })) });
  }

  /** Stops every run and waits for them to settle (shutdown). */
  async stopAll(): Promise<void> {
    this.deps.approvals.close();
    for (const sessionId of this.turns.keys()) this.hub.stop(sessionId, 'shutdown');
    await Promise.all(this.turns.values());
    for (const task of this.background.values()) task.controller.abort();
    await Promise.all([...this.background.values()].map((task) => task.done));
  }

  /** Stops the session's run; a stopped turn does not wait for the previous turn's compression either. */
  stop(sessionId: string): boolean {
    const stopped = this.hub.stop(sessionId);
    if (stopped) this.background.get(sessionId)?.controller.abort();
    return stopped;
  }

  /** Settles once the session's current turn has ended (at once when it has none). */
  async whenIdle(sessionId: string): Promise<void> {
    await this.turns.get(sessionId);
  }

  isRunning(sessionId: string): boolean {
    return this.hub.isRunning(sessionId);
  }

  /** Whether any session has a turn or background work (compression) in progress. */
  get busy(): boolean {
    return this.turns.size > 0 || this.background.size > 0;
  }

  subscribe(sessionId: string, listener: EventListener): () => void {
    return this.hub.subscribe(sessionId, listener);
  }

  /** The tool set changed: every session socket and every events socket hears it. */
  announceTools(): void {
    const tools = this.deps.tools.summaries();
    this.hub.broadcast({ type: 'tools_changed', tools });
    this.events.publish({ type: 'tools_changed', tools });
  }

  private backgroundWork(sessionId: string): SessionBackgroundWork {
    return {
      settled: async () => {
        await this.background.get(sessionId)?.done;
      },
      start: (work) => {
        const previous = this.background.get(sessionId)?.done;
        const controller = new AbortController();
        const emit = (event: AgentEvent) => this.hub.broadcast(event, sessionId);
        const task: BackgroundTask = {
          controller,
          done: (async () => {
            await previous;
            await work(emit, controller.signal);
          })().catch((error: unknown) => this.deps.logger.error({ err: error, sessionId }, 'background work failed')),
        };
        this.background.set(sessionId, task);
        void task.done.finally(() => {
          if (this.background.get(sessionId) === task) this.background.delete(sessionId);
        });
      },
    };
  }
}
