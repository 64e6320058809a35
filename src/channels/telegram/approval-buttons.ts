import { approvalCallbackKey, parseApprovalCallback, type ApprovalChoice, type ApprovalView } from './approval-message.ts';
import { pressedWhereSent, type ButtonPress, type SentButtons } from './button-press.ts';

/** An approval card as it was sent: the session and call it decides, and the chat and message it went to. */
export interface ShownApproval extends SentButtons {
  sessionId: string;
  view: ApprovalView;
  /** Who pressed a button, set before the decision so the resolved event can name them. */
  pressedBy?: string;
}

/** What a press on an approval button amounts to. */
export type ApprovalPress =
  | { kind: 'decide'; approval: ShownApproval; choice: ApprovalChoice }
  /** The call is no longer waiting (or was never shown): nothing to decide. */
  | { kind: 'stale' }
  /** The card exists, but not on the message pressed, or the presser is not the person of its chat. */
  | { kind: 'elsewhere'; approval: ShownApproval };

/**
 * The approval cards the channel has sent, by their callback key. A press decides a card only
 * when it comes from the chat and the message the card was sent as: the key in the callback
 * data alone would let anyone who can press a button anywhere decide another chat's call.
 * Each call is shown once, whichever of the gate and the session's events tells of it first.
 */
export class ApprovalButtons {
  private readonly shown = new Map<string, ShownApproval>();
  private readonly sending = new Set<string>();

  /** Claims the call's card for sending; false when it is shown or being sent already. */
  claim(callId: string): boolean {
    const key = approvalCallbackKey(callId);
    if (this.shown.has(key) || this.sending.has(key)) return false;
    this.sending.add(key);
    return true;
  }

  /** The claimed card was sent (`approval`) or could not be (undefined). */
  settle(callId: string, approval: ShownApproval | undefined): void {
    const key = approvalCallbackKey(callId);
    this.sending.delete(key);
    if (approval) this.shown.set(key, approval);
  }

  /** The call was decided: its card, if one was shown, is forgotten and returned to be edited. */
  resolve(callId: string): ShownApproval | undefined {
    const key = approvalCallbackKey(callId);
    const approval = this.shown.get(key);
    this.shown.delete(key);
    return approval;
  }

  /** Reads a press; undefined when its data is not an approval button's. */
  press(press: ButtonPress): ApprovalPress | undefined {
    const pressed = parseApprovalCallback(press.data);
    if (!pressed) return undefined;
    const approval = this.shown.get(pressed.key);
    if (!approval) return { kind: 'stale' };
    if (!pressedWhereSent(press, approval)) return { kind: 'elsewhere', approval };
    return { kind: 'decide', approval, choice: pressed.choice };
  }
}
