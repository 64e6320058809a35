import type { AccountPerson } from '../../household/channel-links.ts';
import type { Person } from '../../people/person.ts';
import type { AgentEvent } from '../../protocol/events.ts';

/** Whom a chat reaches Hearth as: its linked person, or the owner of a household of one (`linked: false`). */
export type ChatPerson = AccountPerson;

/** A file a person sent, downloaded from Telegram. */
export interface ReceivedFile {
  name: string;
  mimeType: string;
  data: Buffer;
  kind: 'photo' | 'document' | 'voice';
}

/**
 * What the channel needs of Hearth's sessions; `sessionServiceSessions` (telegram-sessions.ts) adapts the session service to it.
 * Results are data: `{ ok: false, reason }` is said to the person, never thrown.
 */
export interface TelegramSessions {
  /**
   * The chat's current session, created as the chat's person's with the default profile on first use; remembered across
   * restarts. One the person may no longer see (the chat was linked to someone else since) is left, and a new one made.
   */
  sessionForChat(chatId: number, chat: ChatPerson): Promise<string>;
  /** The chat's session if it has one the person may see (nothing is created): followed from the start, so the page's turns in it reach the chat. */
  existingSessionForChat(chatId: number, chat: ChatPerson): Promise<string | undefined>;
  /** A new session of the chat's person, with `profileId` or the default; it becomes the chat's session. */
  newSession(chatId: number, chat: ChatPerson, profileId?: string): Promise<{ ok: true; sessionId: string; profile: { id: string; name: string } } | { ok: false; reason: string }>;
  /** Starts a turn: photos as images, documents and voice notes (those not transcribed) into the session's files; a forward marked with whose words it holds; `by`, the chat's person, asks its calls. */
  send(sessionId: string, text: string, files: ReceivedFile[], forwarded?: string, by?: string): Promise<{ ok: true } | { ok: false; reason: string }>;
  stop(sessionId: string): Promise<void>;
  /** Every event of the session from now on; the returned function stops following. */
  follow(sessionId: string, listener: (event: AgentEvent) => void): () => void;
  /** The decision of `decider`, the chat's person, made in this chat (`via: 'telegram'`); `forbidden` when `mayDecide` does not let them. */
  decide(sessionId: string, callId: string, decision: 'allow' | 'deny', remember: 'once' | 'session', decider: Person): Promise<'decided' | 'not_found' | 'forbidden'>;
  /** The profiles the person's role may use. */
  profiles(person: Person): Promise<Array<{ id: string; name: string }>>;
  /** The chat session's profile, switched to one the person's role may use; `id` omitted: only says which it is. */
  profile(sessionId: string, person: Person, id?: string): Promise<{ ok: true; id: string; name: string } | { ok: false; reason: string }>;
  /**
   * What `/sessions` offers: a linked person's recent sessions and the shared ones they may use; in a household of one,
   * where allowed chats act as the owner unlinked, the chat's own (made or continued in it), never another chat's.
   */
  recentSessions(chatId: number, chat: ChatPerson): Promise<Array<{ id: string; title: string }>>;
  /** Makes `sessionId`, one `recentSessions` may offer, the chat's session; any other answers as a missing one. */
  switchSession(chatId: number, chat: ChatPerson, sessionId: string): Promise<{ ok: true } | { ok: false; reason: string }>;
}
