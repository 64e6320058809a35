import type { InlineKeyboardButton } from 'grammy/types';
import { pressedWhereSent, type ButtonPress, type SentButtons } from './button-press.ts';

const prefix = 'ss:';

interface Listing extends SentButtons {
  sessionIds: ReadonlySet<string>;
}

/** The buttons of a `/sessions` listing, one a row: each continues one session. */
export function sessionButtons(sessions: ReadonlyArray<{ id: string; title: string }>): InlineKeyboardButton[][] {
  // Telegram allows 64 bytes of callback data.
  return sessions.map((session) => [{ text: session.title.slice(0, 60) || 'Untitled', callback_data: `${prefix}${session.id}`.slice(0, 64) }]);
}

/** The session a press asks for, when it is a `/sessions` button's. */
export function requestedSession(press: ButtonPress): string | undefined {
  return press.data.startsWith(prefix) ? press.data.slice(prefix.length) : undefined;
}

/**
 * What each chat's last `/sessions` listing offered. A session button binds only a session
 * that listing showed, pressed on that listing's message in that chat: forged callback data
 * (`ss:` and another chat's session id) binds nothing.
 *
 * Kept in memory, one listing a chat (chats are the allowed users', so it stays small). After a
 * restart the old listing's buttons are refused and the person sends `/sessions` again: a
 * listing costs one command, and failing closed needs no table of its own.
 */
export class SessionListings {
  private readonly byChat = new Map<number, Listing>();

  /** The listing just sent as `messageId` in `chatId` (it replaces the chat's previous one). */
  listed(chatId: number, messageId: number, buttons: InlineKeyboardButton[][]): void {
    const sessionIds = new Set<string>();
    for (const button of buttons.flat()) {
      const data = 'callback_data' in button ? button.callback_data : undefined;
      if (data?.startsWith(prefix)) sessionIds.add(data.slice(prefix.length));
    }
    this.byChat.set(chatId, { chatId, messageId, sessionIds });
  }

  /** Whether the chat's last listing offered the session, on the message pressed, to its person. */
  offered(press: ButtonPress, sessionId: string): boolean {
    const listing = this.byChat.get(press.chatId);
    return listing !== undefined && pressedWhereSent(press, listing) && listing.sessionIds.has(sessionId);
  }
}
