import type { AgentEvent } from '../protocol/events.ts';
import type { EventListener } from './run-hub.ts';
import type { TurnOutcome, UserInput } from './turn.ts';

export type SendResult = { ok: true; outcome: Promise<TurnOutcome> } | { ok: false; code: 'session_busy' };

/**
 * What the session service needs of the agent: the runs of a session, nothing of its rows.
 * `Agent` is the one implementation; tests give the service a fake.
 */
export interface AgentRuns {
  /**
   * Starts a turn in the background; `session_busy` while the session has one. `by` is the person
   * who asked for it (in a session shared with them, perhaps not the session's own; ToolContext.askedBy).
   */
  send(sessionId: string, input: UserInput, by?: string): SendResult;
  /** Answers the last user message again. */
  regenerate(sessionId: string, by?: string): SendResult;
  /** Replaces a user message (by its display id) and answers it. */
  edit(sessionId: string, messageId: number, content: string, by?: string): SendResult;
  /** Stops the session's run; false when it had none. */
  stop(sessionId: string): boolean;
  /** Settles once the session's current turn has ended (at once when it has none). */
  whenIdle(sessionId: string): Promise<void>;
  isRunning(sessionId: string): boolean;
  /** Every event of the session's runs, from the current run's start on; returns the unsubscribe. */
  subscribe(sessionId: string, listener: EventListener): () => void;
  /**
   * Before a session is deleted: stops its run and background work, waits for them to settle,
   * and has every tool release what it holds for the session. Its rows and files are the caller's.
   */
  forget(sessionId: string): Promise<void>;
  /**
   * An event about the session from outside the model's answer (`profile_switched`): into the
   * running turn's stream when one runs, so a page joining later hears it too, else to whoever watches.
   */
  tell(sessionId: string, event: AgentEvent): void;
}
