import type { Api } from 'grammy';
import type { ApprovalResolution } from '../../agent/approval-gate.ts';
import {
  approvalCallbackKey,
  approvalHtml,
  approvalKeyboard,
  decidedApprovalHtml,
  parseApprovalCallback,
  type ApprovalChoice,
  type ApprovalDecider,
  type ApprovalView,
} from './approval-message.ts';
import { pressedWhereSent, type ButtonPress, type SentButtons } from './button-press.ts';

/** An approval card as it was sent: the session and call it decides, and the chat and message it went to. */
export interface ShownApproval extends SentButtons {
  sessionId: string;
  view: ApprovalView;
  /** Who pressed a button, set before the decision so that the edit can name them. */
  pressedBy?: string;
}

/** What a press on an approval button amounts to. */
export type ApprovalPress =
  | { kind: 'decide'; approval: ShownApproval; choice: ApprovalChoice }
  /** The call is no longer waiting (or was never shown): nothing to decide. */
  | { kind: 'stale' }
  /** The card exists, but not on the message pressed, or the presser is not the person of its chat. */
  | { kind: 'elsewhere'; approval: ShownApproval };

export type ApprovalCardsApi = Pick<Api, 'sendMessage' | 'editMessageText'>;

interface WaitingCall {
  sessionId: string;
  view: ApprovalView;
  card?: 'sending' | ShownApproval;
}

/**
 * The calls the gate says wait, by their callback key, each with its card once sent to a chat:
 * at most one card a call, edited to say who decided once the gate settles it. A press decides a
 * card only when it comes from the chat and the message the card was sent as: the key in the
 * callback data alone would let anyone who can press a button anywhere decide another chat's call.
 */
export class ApprovalCards {
  private readonly waiting = new Map<string, WaitingCall>();

  constructor(
    private readonly api: ApprovalCardsApi,
    private readonly onFailure: (what: string, error: unknown) => void,
  ) {}

  /** A call waits at the gate; it gets a card once `show` sends it to a chat. */
  add(sessionId: string, view: ApprovalView): void {
    this.waiting.set(approvalCallbackKey(view.call_id), { sessionId, view });
  }

  /** The session's waiting calls that have no card yet. */
  unshownIn(sessionId: string): string[] {
    return [...this.waiting.values()].filter((call) => call.sessionId === sessionId && call.card === undefined).map((call) => call.view.call_id);
  }

  /** Sends the call's card, with its buttons, to the chat; nothing when it has a card or waits no longer. */
  async show(callId: string, chatId: number): Promise<void> {
    const call = this.waiting.get(approvalCallbackKey(callId));
    if (!call || call.card !== undefined) return;
    call.card = 'sending';
    try {
      const message = await this.api.sendMessage(chatId, approvalHtml(call.view), { parse_mode: 'HTML', reply_markup: approvalKeyboard(callId) });
      call.card = { sessionId: call.sessionId, view: call.view, chatId, messageId: message.message_id };
    } catch (error) {
      call.card = undefined;
      this.onFailure('approval not shown', error);
    }
  }

  /** The gate settled the call: its card, if it has one, is edited to say what was decided and by whom (a press here, the page, a timeout). */
  async resolve(callId: string, { decision, remember, by, via }: ApprovalResolution): Promise<void> {
    const card = this.take(callId);
    if (card === undefined || card === 'sending') return;
    const decider: ApprovalDecider = by !== 'user' ? { kind: by } : via === 'telegram' ? { kind: 'person', name: card.pressedBy ?? 'Telegram' } : { kind: 'page' };
    await this.api
      .editMessageText(card.chatId, card.messageId, decidedApprovalHtml(card.view, { decision, remember, decider }), { parse_mode: 'HTML' })
      .catch((error: unknown) => this.onFailure('approval message not edited', error));
  }

  /** The call waits no longer (the gate did not know it when pressed): its card stays as it is. */
  forget(callId: string): void {
    this.take(callId);
  }

  /** Reads a press; undefined when its data is not an approval button's. */
  press(press: ButtonPress): ApprovalPress | undefined {
    const pressed = parseApprovalCallback(press.data);
    if (!pressed) return undefined;
    const card = this.waiting.get(pressed.key)?.card;
    if (card === undefined || card === 'sending') return { kind: 'stale' };
    if (!pressedWhereSent(press, card)) return { kind: 'elsewhere', approval: card };
    return { kind: 'decide', approval: card, choice: pressed.choice };
  }

  private take(callId: string): WaitingCall['card'] {
    const key = approvalCallbackKey(callId);
    const card = this.waiting.get(key)?.card;
    this.waiting.delete(key);
    return card;
  }
}
