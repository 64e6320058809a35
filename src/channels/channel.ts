import type { ApprovalDetails, ApprovalResolution } from '../agent/approval-gate.ts';
import type { DocumentLibrary } from '../documents/document-types.ts';
import type { Audience, HearthEvent, PendingApprovalSummary } from '../events/hearth-events.ts';
import type { ChannelPeople } from '../household/channel-links.ts';
import type { IntegrationStatus } from '../integrations/integration-registry.ts';
import type { Logger } from '../logger.ts';
import type { Sessions } from '../sessions/sessions.ts';
import type { SpeechService } from '../speech/speech-service.ts';

/** A notification as the events socket carries it (docs/agent.md, "Notifications"). */
export type ChannelNotification = Omit<Extract<HearthEvent, { type: 'notification' }>, 'type'>;

/**
 * A tool call waiting for a decision: `session_id`, `call_id`, `tool`, `subject`, `reason`,
 * `expires_at`; `asked_by` `{id,name}` is the person whose session's run asks (null when they left
 * the household) and `deciders` `[{id,name}]` everyone `mayDecide` lets decide it. A channel shows
 * the card only to its accounts linked to a decider (with who asked), and may tell the asker's that
 * it waits; a decision it passes on names its person as `decider`, and the gate refuses anyone else.
 */
export type ChannelApproval = PendingApprovalSummary;

/** Hearth's speech, for a channel that takes voice: whether each way is configured, and the two calls (failures come back as data). */
export type ChannelSpeech = Pick<SpeechService, 'canTranscribe' | 'canSynthesize' | 'transcribe' | 'synthesize'>;

/** What a channel is handed when it starts: the only way it reaches sessions, and where it reports its state. */
export interface ChannelContext {
  /** Find or create sessions (`findOrCreate('telegram:<chat id>', {origin: 'telegram'})`), send, stop, follow, decide. */
  sessions: Sessions;
  /** Whose each account of the channel is: linked people (`/start <code>`), or the owner in a household of one. */
  people: ChannelPeople;
  /** Its state in GET /integrations and the `integration_status` event, under the channel's id; never put a secret in `message` or `details`. */
  reportStatus(status: Omit<IntegrationStatus, 'name'>): void;
  logger: Logger;
  /** Speech to text and back, as configured (STT_BACKEND, TTS_BACKEND); either may be off. */
  speech: ChannelSpeech;
  /** The libraries of documents, which a channel may add to as its person (Telegram's "add to library"). */
  documents?: DocumentLibrary;
}

/**
 * One way a person reaches Hearth besides the page (docs/architecture.md, *Adding a channel*): a chat app, for instance. The
 * app starts every registered channel after the scheduler and stops it at shutdown, while the
 * runs are being stopped. Each call below is made for every channel; a channel that throws or
 * rejects is logged and never holds up another.
 */
export interface Channel {
  /** Lower-case, unique: `telegram`. Also the name of its integration status and of `via` on its decisions. */
  readonly id: string;
  /** Connects in the background: reports `connecting`, then `connected` or `failed` with the reason (and retries on its own). */
  start(context: ChannelContext): void | Promise<void>;
  /** Stops taking messages, finishes what it is sending, lets go of its connection. */
  stop(): Promise<void>;
  /** A notification was raised (a finished schedule, a heartbeat finding, an approval nobody watches), for the people `audience` admits (all when absent). */
  deliverNotification(notification: ChannelNotification, audience?: Audience): void | Promise<void>;
  /**
   * A call waits for a decision, in any session: the channel presents those it should (its own sessions', say).
   * This is a channel's one source of approvals: it ignores `approval_required` and `approval_resolved` on the sessions it follows.
   */
  presentApproval(approval: ChannelApproval, details: ApprovalDetails): void | Promise<void>;
  /** A waiting call was settled: by the person (`by: 'user'`, `via`: `page`, `rest` or a channel's id), a timeout or a stop. */
  approvalResolved(approval: ChannelApproval, resolution: ApprovalResolution): void | Promise<void>;
}
