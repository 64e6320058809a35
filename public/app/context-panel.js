import { api } from './api.js';
import { element, replaceContent } from './dom.js';
import { heading, load } from './panel-frame.js';
import { summaryItem } from './transcript-items.js';

/** What the model currently sees of the open session: its size and the summaries that replaced older turns. */
export class ContextPanel {
  name = 'Context';

  /** `sessionId()` names the open session (undefined while none is). */
  constructor(aside, { sessionId = () => undefined } = {}) {
    this.aside = aside;
    this.sessionId = sessionId;
  }

  refresh() {
    return this.#show(this.sessionId());
  }

  onEvent(event) {
    if (event.type === 'session_opened' || event.type === 'context_changed') this.refresh();
  }

  /** Its refresh button reads the session it shows again. */
  async #show(sessionId) {
    if (!sessionId) {
      replaceContent(this.aside, heading(this.name), element('p', { className: 'muted' }, 'Open a session to see its context.'));
      return;
    }
    const context = await load(this.aside, this.name, () => api.context(sessionId), () => this.#show(sessionId));
    if (!context) return;
    const summaries = context.messages.filter((message) => message.is_summary);
    const share = context.max_context_tokens > 0 ? Math.round((100 * context.context_tokens) / context.max_context_tokens) : 0;
    replaceContent(
      this.aside,
      heading(this.name, () => this.#show(sessionId)),
      element('p', {}, `${context.context_tokens.toLocaleString()} of ${context.max_context_tokens.toLocaleString()} tokens (${share}%) in ${context.messages.length} messages.`),
      summaries.length === 0
        ? element('p', { className: 'muted' }, 'Nothing has been summarised yet: the model sees the whole conversation.')
        : summaries.map((message) => summaryItem(message.content)),
    );
  }
}
