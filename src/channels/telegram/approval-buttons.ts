import { Composer } from 'grammy';
import type { Logger } from '../../logger.ts';
import type { ApprovalCards } from './approval-cards.ts';
import { decisionOf, staleApprovalAnswer } from './approval-message.ts';
import { buttonPress, refusePress } from './button-press.ts';
import { chatPersonOf, type TelegramContext } from './chat-people.ts';
import type { TelegramSessions } from './telegram-port.ts';

export interface ApprovalButtonsOptions {
  cards: ApprovalCards;
  sessions: Pick<TelegramSessions, 'decide'>;
  logger: Logger;
}

/**
 * Presses on an approval card's buttons: Allow once, Allow for this chat, Deny. The decision is the
 * chat's person's, and goes to the gate, which takes it only where `mayDecide` lets them; its word
 * edits the card. A press on a decided card is told so; one anywhere but on a card of the call in
 * the presser's own chat is refused and logged.
 */
export function approvalButtons({ cards, sessions, logger }: ApprovalButtonsOptions): Composer<TelegramContext> {
  const composer = new Composer<TelegramContext>();
  composer.on('callback_query:data', async (context, next) => {
    const press = buttonPress(context.callbackQuery);
    const pressed = press && cards.press(press);
    if (!press || !pressed) return next();
    if (pressed.kind === 'stale') return void (await context.answerCallbackQuery({ text: staleApprovalAnswer }));
    if (pressed.kind === 'elsewhere') {
      const shown = pressed.shownAs.map(({ chatId, messageId }) => `message ${messageId} in chat ${chatId}`).join(', ');
      const why = shown === '' ? 'the approval has no card yet' : `the approval was shown as ${shown}`;
      return refusePress(context, logger, press, 'approval button', why, 'This button is not on that approval: it can be decided only where it was asked.');
    }
    const { approval } = pressed;
    const { person, linked } = chatPersonOf(context);
    // An unlinked chat of a household of one acts as the owner: its card names the Telegram name, as before people.
    approval.pressedBy = linked ? person.name : context.from.first_name;
    const { decision, remember } = decisionOf(pressed.choice);
    const outcome = await sessions.decide(approval.sessionId, approval.view.call_id, decision, remember, person);
    if (outcome === 'not_found') {
      cards.forget(approval.view.call_id);
      return void (await context.answerCallbackQuery({ text: staleApprovalAnswer }));
    }
    if (outcome === 'forbidden') {
      return refusePress(context, logger, press, 'approval button', `${person.name} (${person.role}) may not decide it`, `${person.name} may not decide this call.`);
    }
    await context.answerCallbackQuery({ text: decision === 'allow' ? 'Allowed' : 'Denied' });
  });
  return composer;
}
