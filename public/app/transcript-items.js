import { ApprovalCard } from './approval-card.js';
import { element, foldable, withInlineCode } from './dom.js';
import { icon } from './icons.js';
import { MarkdownStream, renderMarkdown } from './markdown.js';
import { answerActions, userActions } from './message-actions.js';
import { toolArgumentsView } from './tool-arguments.js';

const foldedResultLength = 600;
const attachedFilesMarker = '\n\nAttached files:\n';

/** A stored image comes as a URL on the server; an image just attached, or from an older history, as data. */
function imageSource(image) {
  return image.startsWith('data:') || image.startsWith('/sessions/') ? image : `data:image/png;base64,${image}`;
}

/** The person's message: plain text, the images they attached and the files they uploaded. */
export function userItem({ id, content, images = [], files = [], scheduled = false }) {
  let text = content;
  let attached = files.map((file) => file.name);
  const marker = content.lastIndexOf(attachedFilesMarker);
  if (marker !== -1 && attached.length === 0) {
    text = content.slice(0, marker);
    attached = content
      .slice(marker + attachedFilesMarker.length)
      .split('\n')
      .map((line) => /^- (.*?): /.exec(line)?.[1])
      .filter(Boolean);
  } else if (marker !== -1) {
    text = content.slice(0, marker);
  }
  return element(
    'article',
    { className: 'item user', dataset: { role: 'user', ...(id !== undefined && { messageId: String(id) }), ...(scheduled && { scheduled: 'true' }) } },
    scheduled && element('span', { className: 'scheduled-mark', title: 'Sent by a schedule, not typed' }, 'scheduled'),
    element('div', { className: 'user-text' }, text),
    images.length > 0 && element('div', { className: 'user-images' }, images.map((image) => element('img', { src: imageSource(image), alt: 'attached image' }))),
    attached.length > 0 && element('ul', { className: 'user-files', 'aria-label': 'Attached files' }, attached.map((name) => element('li', {}, icon('file'), name))),
    userActions(),
  );
}

/**
 * An answer from the model, possibly still streaming: reasoning in a foldable block, Markdown
 * text rendered by a MarkdownStream.
 */
export class AssistantItem {
  constructor() {
    this.markdown = element('div', { className: 'markdown' });
    this.stream = new MarkdownStream(this.markdown);
    this.thinkingText = '';
    this.thinkingBody = element('div', { className: 'thinking-text' });
    this.thinking = foldable('Reasoning', this.thinkingBody, { className: 'thinking', open: true });
    this.thinking.hidden = true;
    this.node = element('article', { className: 'item assistant', dataset: { role: 'assistant' } }, this.thinking, this.markdown);
    this.node.append(answerActions(this.node, () => this.content ?? this.stream.text));
    this.copyButton = this.node.querySelector('.copy-answer');
    this.#showCopy();
    this.dirty = false;
  }

  /** A round that holds only reasoning has nothing to copy. */
  #showCopy() {
    this.copyButton.hidden = !(this.content ?? this.stream.text)?.trim();
  }

  get isEmpty() {
    return this.thinkingText === '' && this.stream.text === '';
  }

  set streaming(value) {
    if (value) this.node.dataset.streaming = 'true';
    else delete this.node.dataset.streaming;
  }

  appendThinking(delta) {
    this.thinkingText += delta;
    this.dirty = true;
  }

  appendText(delta) {
    this.stream.append(delta);
    this.dirty = true;
  }

  /** Draws what has arrived since the last call; the frame scheduler calls it at most once per frame. */
  render() {
    if (!this.dirty) return;
    this.dirty = false;
    if (this.thinkingText !== '') {
      this.thinking.hidden = false;
      this.thinkingBody.textContent = this.thinkingText;
    }
    this.stream.render();
    this.#showCopy();
  }

  endThinking() {
    this.thinking.open = false;
  }

  finish({ content, stopped = false, stoppedLabel } = {}) {
    this.render();
    this.streaming = false;
    this.thinking.open = false;
    if (content !== undefined && (content !== '' || this.stream.text === '')) this.stream.finish(content);
    else this.stream.finish();
    if (stopped) this.markStopped(stoppedLabel);
    this.#showCopy();
  }

  /** The answer did not finish: stopped by the person, by a shutdown, or cut off by a restart. */
  markStopped(label = 'Stopped') {
    this.node.dataset.stopped = 'true';
    // With the answer it ends, above Copy and Regenerate.
    if (!this.node.querySelector('.stopped-label')) this.markdown.after(element('p', { className: 'stopped-label' }, label));
  }

  /** A stored answer, drawn at once. */
  static fromMessage(message) {
    const item = new AssistantItem();
    if (message.thinking) {
      item.thinkingText = message.thinking;
      item.thinking.hidden = false;
      item.thinking.open = false;
      item.thinkingBody.textContent = message.thinking;
    }
    item.content = message.content;
    if (message.content) item.markdown.replaceChildren(renderMarkdown(message.content));
    if (message.stopped) item.markStopped();
    if (message.interrupted) item.markStopped('Interrupted: the server restarted before this answer finished');
    item.#showCopy();
    return item;
  }
}

/** One tool call: a spinner while it runs, then its result, green or red. */
export class ToolCard {
  constructor({ callId, tool, args, subagent = false }) {
    this.tool = tool;
    this.status = element('span', { className: 'tool-status', role: 'img', 'aria-label': 'running' });
    this.result = element('div', { className: 'tool-result-slot' });
    this.subagentActivity = tool === 'spawn_agent' ? element('div', { className: 'subagent-activity', 'aria-label': 'Sub-agent activity' }) : undefined;
    // Code the agent writes is read before it is trusted: a write_tool card shows it open.
    this.args = foldable(tool === 'write_tool' ? 'Code' : 'Arguments', toolArgumentsView(tool, args), { className: 'tool-args', open: tool === 'write_tool' });
    this.node = element(
      'article',
      { className: 'item tool', dataset: { role: 'tool', tool, status: 'pending', callId: callId ?? '', ...(subagent && { subagent: 'true' }) } },
      element('header', { className: 'tool-header' }, this.status, element('span', { className: 'tool-name' }, tool)),
      this.args,
      this.subagentActivity,
      this.result,
    );
  }

  /** `approval_required`: the call waits for the person; the question goes under the arguments. */
  requestApproval({ call_id: callId, subject, reason, not_read_only: notReadOnly, expires_at: expiresAt, can_decide: canDecide = true, deciders }, onDecide) {
    this.approval?.node.remove();
    // Allowing write_tool installs the code shown above; it runs nothing yet.
    const action = this.tool === 'write_tool' ? 'install' : 'run';
    this.approval = new ApprovalCard({ callId, subject, reason, notReadOnly, expiresAt, onDecide, canDecide, deciders, action });
    this.node.dataset.approval = 'waiting';
    if (this.node.dataset.status === 'pending') this.status.setAttribute('aria-label', 'waiting for approval');
    this.args.after(this.approval.node);
    return this.approval;
  }

  /** `approval_resolved`, or a decision read from the audit for a stored call. */
  resolveApproval({ call_id: callId, subject, decision, by, remember, decider }) {
    if (!this.approval) {
      this.approval = ApprovalCard.decided({ callId, subject, decision, by, remember, decider });
      this.args.after(this.approval.node);
    } else this.approval.resolve({ decision, by, remember, decider });
    this.node.dataset.approval = decision === 'allow' ? 'allowed' : 'denied';
    if (this.node.dataset.status === 'pending') this.status.setAttribute('aria-label', 'running');
  }

  complete({ result, success }) {
    this.node.dataset.status = success ? 'done' : 'failed';
    this.status.setAttribute('aria-label', success ? 'succeeded' : 'failed');
    const text = result ?? '';
    const long = text.length > foldedResultLength;
    const body = element('pre', { className: 'tool-result-text' }, text);
    const summary = long ? `Result (${text.length.toLocaleString()} characters)` : 'Result';
    this.result.replaceChildren(foldable(summary, body, { className: 'tool-result', open: !long && text.length > 0 && !success }));
  }
}

export function planItem(plan) {
  return element('article', { className: 'item plan', dataset: { role: 'plan' } }, foldable('Plan', element('div', { className: 'markdown' }, renderMarkdown(plan)), { open: true }));
}

export function summaryItem(content) {
  return element(
    'article',
    { className: 'item summary', dataset: { role: 'summary' } },
    foldable('Summary of earlier conversation', element('div', { className: 'markdown' }, renderMarkdown(content))),
  );
}

const retriedErrors = new Set(['llm_unreachable', 'llm_timeout', 'llm_error']);

/** A failure in the transcript; one from the LLM offers Retry, `retry()` resolving true once the request went out. */
export function errorItem({ code, message }, retry) {
  const retryButton =
    retry &&
    retriedErrors.has(code) &&
    element('button', {
      type: 'button',
      className: 'retry-answer',
      'aria-label': 'Retry',
      onclick: async (event) => {
        const button = event.currentTarget;
        button.disabled = true;
        if (!(await retry())) button.disabled = false;
      },
    }, 'Retry');
  return element(
    'article',
    { className: 'item error', role: 'alert', dataset: { role: 'error', code: code ?? 'error' } },
    element('strong', {}, 'Error: '),
    withInlineCode(message),
    retryButton,
  );
}

export function noticeItem(text) {
  return element('p', { className: 'item notice', dataset: { role: 'notice' } }, text);
}
