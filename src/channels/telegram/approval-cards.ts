import type { Api } from 'grammy';
import type { ApprovalResolution } from '../../agent/approval-gate.ts';
import {
  approvalCallbackKey,
  approvalHtml,
  approvalKeyboard,
  decidedApprovalHtml,
  parseApprovalCallback,
  waitingApprovalHtml,
  type ApprovalChoice,
  type ApprovalDecider,
  type ApprovalView,
} from './approval-message.ts';
import { pressedWhereSent, type ButtonPress, type SentButtons } from './button-press.ts';

/** An approval card as it was sent: the session and call it decides, and the chat and message it went to. */
export interface ShownApproval extends SentButtons {
  sessionId: string;
  view: ApprovalView;
  /** Whose run asks, when the card went to someone else's chat. */
  askedBy?: string;
  /** False for the asker's own chat when they may not decide: the card has no buttons, and a press on it counts for nothing. */
  decides: boolean;
  /** Who pressed a button, set before the decision so that the edit can name them. */
  pressedBy?: string;
}

/** What a press on an approval button amounts to. */
export type ApprovalPress =
  | { kind: 'decide'; approval: ShownApproval; choice: ApprovalChoice }
  /** The call is no longer waiting (or was never shown): nothing to decide. */
  | { kind: 'stale' }
  /** The call waits, but the press is not on a card of it sent to the presser's chat (another chat's, another message). */
  | { kind: 'elsewhere'; shownAs: SentButtons[] };

export type ApprovalCardsApi = Pick<Api, 'sendMessage' | 'editMessageText'>;

interface WaitingCall {
  sessionId: string;
  view: ApprovalView;
  /** Its cards by chat: a call goes to each chat of someone who may decide it. */
  cards: Map<number, 'sending' | ShownApproval>;
  /** Cards being sent: a call settled meanwhile edits them once they are there. */
  sends: Set<Promise<void>>;
}

/**
 * The calls the gate says wait, by their callback key, each with its cards once sent: at most one
 * card a call in a chat, each edited to say who decided once the gate settles it. A press decides
 * only on a card of the call in the presser's own chat, on the message the card was sent as: the
 * key in the callback data alone would let anyone who can press a button anywhere decide another
 * chat's call.
 */
export class ApprovalCards {
  private readonly waiting = new Map<string, WaitingCall>();

  constructor(
    private readonly api: ApprovalCardsApi,
    private readonly onFailure: (what: string, error: unknown) => void,
  ) {}

  /** A call waits at the gate; it gets a card in a chat once `show` sends one there. */
  add(sessionId: string, view: ApprovalView): void {
    this.waiting.set(approvalCallbackKey(view.call_id), { sessionId, view, cards: new Map(), sends: new Set() });
  }

  /** The waiting call's view, if it still waits. */
  viewOf(callId: string): ApprovalView | undefined {
    return this.waiting.get(approvalCallbackKey(callId))?.view;
  }

  /** The session's waiting calls that have no card in the chat yet. */
  unshownIn(sessionId: string, chatId: number): string[] {
    return [...this.waiting.values()].filter((call) => call.sessionId === sessionId && !call.cards.has(chatId)).map((call) => call.view.call_id);
  }

  /**
   * Sends the call's card to the chat: with its buttons to someone who may decide it (naming the
   * asker when it is someone else), without, saying who may, to an asker who may not. Nothing when
   * it has a card there or waits no longer.
   */
  async show(callId: string, chatId: number, { askedBy, decides = true }: { askedBy?: string; decides?: boolean } = {}): Promise<void> {
    const call = this.waiting.get(approvalCallbackKey(callId));
    if (!call || call.cards.has(chatId)) return;
    call.cards.set(chatId, 'sending');
    const send = (async () => {
      try {
        const message = decides
          ? await this.api.sendMessage(chatId, approvalHtml(call.view, askedBy), { parse_mode: 'HTML', reply_markup: approvalKeyboard(callId) })
          : await this.api.sendMessage(chatId, waitingApprovalHtml(call.view), { parse_mode: 'HTML' });
        call.cards.set(chatId, { sessionId: call.sessionId, view: call.view, chatId, messageId: message.message_id, decides, ...(askedBy !== undefined && { askedBy }) });
      } catch (error) {
        call.cards.delete(chatId);
        this.onFailure('approval not shown', error);
      }
    })();
    call.sends.add(send);
    await send;
    call.sends.delete(send);
  }

  /** The gate settled the call: each of its cards is edited to say what was decided and by whom (a press here, the page, a timeout). */
  async resolve(callId: string, { decision, remember, by, via, decider }: ApprovalResolution): Promise<void> {
    const call = this.take(callId);
    if (!call) return;
    await Promise.all(call.sends);
    const cards = [...call.cards.values()].filter((card) => card !== 'sending');
    const pressedBy = cards.find((card) => card.pressedBy !== undefined)?.pressedBy;
    const who: ApprovalDecider = by !== 'user' ? { kind: by } : via === 'telegram' ? { kind: 'person', name: pressedBy ?? decider?.name ?? 'Telegram' } : { kind: 'page' };
    await Promise.all(
      cards.map((card) =>
        this.api
          .editMessageText(card.chatId, card.messageId, decidedApprovalHtml(card.view, { decision, remember, decider: who }, card.askedBy), { parse_mode: 'HTML' })
          .catch((error: unknown) => this.onFailure('approval message not edited', error)),
      ),
    );
  }

  /** The call waits no longer (the gate did not know it when pressed): its cards stay as they are. */
  forget(callId: string): void {
    this.take(callId);
  }

  /** Reads a press; undefined when its data is not an approval button's. */
  press(press: ButtonPress): ApprovalPress | undefined {
    const pressed = parseApprovalCallback(press.data);
    if (!pressed) return undefined;
    const call = this.waiting.get(pressed.key);
    if (!call) return { kind: 'stale' };
    const card = call.cards.get(press.chatId);
    if (card === undefined || card === 'sending' || !card.decides || !pressedWhereSent(press, card)) {
      const shownAs = [...call.cards.values()].filter((shown) => shown !== 'sending').map(({ chatId, messageId }) => ({ chatId, messageId }));
      return { kind: 'elsewhere', shownAs };
    }
    return { kind: 'decide', approval: card, choice: pressed.choice };
  }

  private take(callId: string): WaitingCall | undefined {
    const key = approvalCallbackKey(callId);
    const call = this.waiting.get(key);
    this.waiting.delete(key);
    return call;
  }
}
