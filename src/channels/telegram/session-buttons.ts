import { Composer } from 'grammy';
import type { InlineKeyboardButton } from 'grammy/types';
import type { Logger } from '../../logger.ts';
import { buttonPress, pressedWhereSent, refusePress, type ButtonPress, type SentButtons } from './button-press.ts';
import { chatPersonOf, type TelegramContext } from './chat-people.ts';
import type { TelegramSessions } from './telegram-port.ts';

const prefix = 'ss:';

interface Listing extends SentButtons {
  sessionIds: ReadonlySet<string>;
}

/** The buttons of a `/sessions` listing, one a row: each continues one session. */
export function sessionKeyboard(sessions: ReadonlyArray<{ id: string; title: string }>): InlineKeyboardButton[][] {
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

export interface SessionButtonsOptions {
  sessions: Pick<TelegramSessions, 'switchSession'>;
  listings: SessionListings;
  /** Mirrors the continued session into the chat. */
  follow: (sessionId: string, chatId: number) => void;
  logger: Logger;
}

/** Presses on a `/sessions` listing's buttons: the chat continues the session picked, if its last listing offered it there. */
export function sessionButtons({ sessions, listings, follow, logger }: SessionButtonsOptions): Composer<TelegramContext> {
  const composer = new Composer<TelegramContext>();
  composer.on('callback_query:data', async (context, next) => {
    const press = buttonPress(context.callbackQuery);
    const sessionId = press && requestedSession(press);
    if (!press || sessionId === undefined) return next();
    if (!listings.offered(press, sessionId)) {
      const why = 'not a session the last /sessions listing showed on that message';
      return refusePress(context, logger, press, 'session switch', why, 'That session was not offered here: send /sessions and pick from the new list.');
    }
    const switched = await sessions.switchSession(press.chatId, chatPersonOf(context), sessionId);
    await context.answerCallbackQuery({ text: switched.ok ? 'Continuing that session.' : switched.reason });
    if (switched.ok) follow(sessionId, press.chatId);
  });
  return composer;
}
