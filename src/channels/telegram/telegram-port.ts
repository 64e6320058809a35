import type { AgentEvent } from '../../protocol/events.ts';

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
  /** The chat's current session, created with the default profile on first use; remembered across restarts. */
  sessionForChat(chatId: number): Promise<string>;
  /** The chat's session if it has one already (nothing is created): followed from the start, so the page's turns in it reach the chat. */
  existingSessionForChat(chatId: number): Promise<string | undefined>;
  /** A new session for the chat, with `profileId` or the default; it becomes the chat's session. */
  newSession(chatId: number, profileId?: string): Promise<{ ok: true; sessionId: string } | { ok: false; reason: string }>;
  /** Starts a turn: photos as images, documents and voice notes into the session's files; a forward marked with whose words it holds. */
  send(sessionId: string, text: string, files: ReceivedFile[], forwarded?: string): Promise<{ ok: true } | { ok: false; reason: string }>;
  stop(sessionId: string): Promise<void>;
  /** Every event of the session from now on; the returned function stops following. */
  follow(sessionId: string, listener: (event: AgentEvent) => void): () => void;
  /** The person's decision, made in this chat (`via: 'telegram'`). */
  decide(sessionId: string, callId: string, decision: 'allow' | 'deny', remember: 'once' | 'session'): Promise<'decided' | 'not_found'>;
  profiles(): Promise<Array<{ id: string; name: string }>>;
  /** The chat session's profile, switched; `id` omitted: only says which it is. */
  profile(sessionId: string, id?: string): Promise<{ ok: true; id: string; name: string } | { ok: false; reason: string }>;
  /** The chat's own recent sessions (made or continued in it), never another chat's. */
  recentSessions(chatId: number): Promise<Array<{ id: string; title: string }>>;
  /** Makes `sessionId`, one of the chat's own, the chat's session. */
  switchSession(chatId: number, sessionId: string): Promise<{ ok: true } | { ok: false; reason: string }>;
}
