import { Composer, type Context } from 'grammy';
import type { Logger } from '../../logger.ts';
import type { ApprovalCards } from './approval-cards.ts';
import { decisionOf, staleApprovalAnswer } from './approval-message.ts';
import { buttonPress, refusePress } from './button-press.ts';
import type { TelegramSessions } from './telegram-port.ts';

export interface ApprovalButtonsOptions {
  cards: ApprovalCards;
  sessions: Pick<TelegramSessions, 'decide'>;
  logger: Logger;
}

/**
 * Presses on an approval card's buttons: Allow once, Allow for this chat, Deny. The decision goes
 * to the gate, whose word edits the card; a press on a decided card is told so, and one anywhere
 * but on the card itself is refused and logged.
 */
export function approvalButtons({ cards, sessions, logger }: ApprovalButtonsOptions): Composer<Context> {
  const composer = new Composer<Context>();
  composer.on('callback_query:data', async (context, next) => {
    const press = buttonPress(context.callbackQuery);
    const pressed = press && cards.press(press);
    if (!press || !pressed) return next();
    if (pressed.kind === 'stale') return void (await context.answerCallbackQuery({ text: staleApprovalAnswer }));
    if (pressed.kind === 'elsewhere') {
      const why = `the approval was shown as message ${pressed.approval.messageId} in chat ${pressed.approval.chatId}`;
      return refusePress(context, logger, press, 'approval button', why, 'This button is not on that approval: it can be decided only where it was asked.');
    }
    const { approval } = pressed;
    approval.pressedBy = context.from.first_name;
    const { decision, remember } = decisionOf(pressed.choice);
    const outcome = await sessions.decide(approval.sessionId, approval.view.call_id, decision, remember);
    if (outcome === 'not_found') {
      cards.forget(approval.view.call_id);
      return void (await context.answerCallbackQuery({ text: staleApprovalAnswer }));
    }
    await context.answerCallbackQuery({ text: decision === 'allow' ? 'Allowed' : 'Denied' });
  });
  return composer;
}
