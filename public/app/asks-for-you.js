import { api } from './api.js';
import { ApprovalCard } from './approval-card.js';
import { element } from './dom.js';

/**
 * Calls someone else asked that wait for this person's decision (a child's ask reaches the adults):
 * the asker's session is not theirs to open, so the card is shown above the conversation and
 * decided over REST. A card goes once its call no longer waits (decided here, elsewhere, or timed out).
 */
export class AsksForYou {
  #cards = new Map();

  constructor(section) {
    this.section = section;
  }

  /** The events socket's waiting calls, `[{session_id, call_id, tool, subject, reason, expires_at, asked_by, can_decide}]`; `me` is GET /me's answer. */
  show(pending, me) {
    const others = pending.filter((waiting) => waiting.can_decide && waiting.asked_by && waiting.asked_by.id !== me?.id);
    const wanted = new Set(others.map(keyOf));
    for (const [key, entry] of this.#cards) {
      if (wanted.has(key)) continue;
      entry.node.remove();
      this.#cards.delete(key);
    }
    for (const waiting of others) {
      const key = keyOf(waiting);
      if (this.#cards.has(key)) continue;
      const card = new ApprovalCard({
        callId: waiting.call_id,
        subject: waiting.subject,
        reason: waiting.reason,
        expiresAt: waiting.expires_at,
        question: waiting.tool === 'write_tool' ? `${waiting.asked_by.name} asks to install a tool:` : `${waiting.asked_by.name} asks to run ${waiting.tool}:`,
        onDecide: (choice) => api.decide(waiting.session_id, waiting.call_id, choice),
      });
      const node = element('div', { className: 'ask-for-you', dataset: { sessionId: waiting.session_id, callId: waiting.call_id, askedBy: waiting.asked_by.id } }, card.node);
      this.#cards.set(key, { card, node });
      this.section.append(node);
    }
    this.section.hidden = this.#cards.size === 0;
  }
}

const keyOf = (waiting) => `${waiting.session_id}\n${waiting.call_id}`;
