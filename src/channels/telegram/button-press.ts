import { Composer, type Context } from 'grammy';
import type { CallbackQuery } from 'grammy/types';
import type { Logger } from '../../logger.ts';

/** A press on an inline button: the message the button was on, its chat, who pressed it, the button's data. */
export interface ButtonPress {
  chatId: number;
  messageId: number;
  userId: number;
  data: string;
}

/** Where a message with buttons was sent. */
export interface SentButtons {
  chatId: number;
  messageId: number;
}

/**
 * The press a callback query reports; undefined without a message (a button of an inline
 * message, which this bot never sends) or without data. The data is whatever the presser's
 * client sent: a client can send any data for any message of its own chat, so it is a claim
 * to check, never a key to act on alone.
 */
export function buttonPress(query: CallbackQuery): ButtonPress | undefined {
  const message = query.message;
  if (!message || query.data === undefined) return undefined;
  return { chatId: message.chat.id, messageId: message.message_id, userId: query.from.id, data: query.data };
}

/**
 * A button counts only on the message it was sent as, pressed by the person of that chat
 * (the channel serves private chats only, where the chat's id is the person's user id).
 */
export function pressedWhereSent(press: ButtonPress, sent: SentButtons): boolean {
  return press.chatId === sent.chatId && press.messageId === sent.messageId && press.userId === sent.chatId;
}

/** The fields of the warning logged for a refused press (never the token: a press does not carry it). */
function refusedPressLog(press: ButtonPress, refused: string): Record<string, unknown> {
  return { telegramUserId: press.userId, chatId: press.chatId, messageId: press.messageId, refused, callbackData: press.data };
}

/** Answers a refused press with a notice for the presser, and logs who pressed what where, and why it was refused. */
export async function refusePress(context: Context, logger: Logger, press: ButtonPress, refused: string, why: string, notice: string): Promise<void> {
  logger.warn(refusedPressLog(press, refused), `Telegram: refused a ${refused} press by user ${press.userId} in chat ${press.chatId} (message ${press.messageId}): ${why}`);
  await context.answerCallbackQuery({ text: notice });
}

/** Mounted after every button's own handler: a press nothing took is answered, and refused when it carried data. */
export function unknownButtons(logger: Logger): Composer<Context> {
  const composer = new Composer<Context>();
  composer.on('callback_query:data', async (context) => {
    const press = buttonPress(context.callbackQuery);
    if (!press) return void (await context.answerCallbackQuery());
    await refusePress(context, logger, press, 'unknown button', 'no button of this bot carries that data', 'This button does nothing.');
  });
  return composer;
}
