// Regenerate and edit (docs/agent.md, "Branches: regenerate and edit"): the display keeps the replaced branch, marked
// `superseded`; the context loses it, so the model sees one consistent conversation.
import type { Db } from '../store/database.ts';
import type { Message, NewMessage } from '../store/message.ts';
import { appendMessage, findContextCopy, listMessages, supersedeDisplayFrom, truncateContextFrom } from '../store/messages-repository.ts';

export type RewindRequest = { type: 'regenerate' } | { type: 'edit'; messageId: number; content: string };

export type RewindRefusal = { code: 'message_not_found' | 'message_not_editable' | 'nothing_to_regenerate'; message: string };

export interface RewindPlan {
  request: RewindRequest;
  /** The user message the branch starts from, as the display holds it. */
  target: Message;
  /** Its copy in the context. */
  contextCopy: Message;
}

/** Finds where the request branches off; a refusal when it cannot. Reads only. */
export async function planRewind(db: Db, sessionId: string, request: RewindRequest): Promise<{ ok: true; plan: RewindPlan } | { ok: false; refusal: RewindRefusal }> {
  const display = await listMessages(db, sessionId, 'display');
  const target = request.type === 'regenerate' ? display.findLast((message) => message.role === 'user' && !message.superseded) : display.find((message) => message.id === request.messageId);
  if (!target) {
    return request.type === 'regenerate'
      ? { ok: false, refusal: { code: 'nothing_to_regenerate', message: 'This session has no message to answer again.' } }
      : { ok: false, refusal: { code: 'message_not_found', message: `This session has no message ${request.messageId}.` } };
  }
  if (target.role !== 'user') return { ok: false, refusal: { code: 'message_not_editable', message: 'Only your own messages can be edited.' } };
  if (target.superseded) return { ok: false, refusal: { code: 'message_not_editable', message: 'That message was already replaced; edit its latest version.' } };
  const contextCopy = await findContextCopy(db, sessionId, target);
  if (!contextCopy) {
    return {
      ok: false,
      refusal: {
        code: 'message_not_editable',
        message: 'That message was summarised when the conversation was compressed, so the model no longer has it; send a new message instead.',
      },
    };
  }
  return { ok: true, plan: { request, target, contextCopy } };
}

/**
 * Cuts the branch: marks the display from the branch point on as superseded and removes the
 * same part of the context; an edit then stores its new message. Answers the user message the
 * turn answers. Run it in the transaction that begins the run.
 */
export async function applyRewind(db: Db, sessionId: string, { request, target, contextCopy }: RewindPlan): Promise<NewMessage> {
  const including = request.type === 'edit';
  await supersedeDisplayFrom(db, sessionId, { messageId: target.id, including });
  await truncateContextFrom(db, sessionId, { messageId: contextCopy.id, including });
  if (request.type === 'regenerate') return contextCopy;
  const edited: NewMessage = { role: 'user', content: request.content, ...(target.images && { images: target.images }) };
  await appendMessage(db, sessionId, edited);
  return edited;
}
