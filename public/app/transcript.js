import { element, foldable } from './dom.js';
import { FrameScheduler } from './frame-scheduler.js';
import { copyAnswer, openEditor, previousVersion, profileMarker, regenerateButton } from './message-actions.js';
import { ScrollFollow } from './scroll-follow.js';
import { AssistantItem, ToolCard, errorItem, noticeItem, planItem, summaryItem, userItem } from './transcript-items.js';

const firstSliceEntries = 60;
const sliceBudgetMs = 10;

/** Lets the browser handle input and paint before the next slice (scheduler.yield where there is one). */
function yieldToBrowser() {
  if (globalThis.scheduler?.yield) return globalThis.scheduler.yield();
  return new Promise((resolve) => setTimeout(resolve, 0));
}

/**
 * Stored messages in the order they are drawn; a tool call and its result share one entry, and
 * each run of superseded messages (an edit or regenerate replaced them) becomes one folded entry.
 */
function historyEntries(messages) {
  const segments = [];
  for (const message of messages) {
    const superseded = message.superseded === true;
    if (segments.at(-1)?.superseded !== superseded) segments.push({ superseded, messages: [] });
    segments.at(-1).messages.push(message);
  }
  return segments.flatMap((segment) => (segment.superseded ? [{ kind: 'previous', entries: messageEntries(segment.messages) }] : messageEntries(segment.messages)));
}

function messageEntries(messages) {
  const entries = [];
  const calls = new Map();
  for (const message of messages) {
    if (message.role === 'user') entries.push({ kind: 'user', message });
    else if (message.role === 'system' && message.profile_switch) entries.push({ kind: 'marker', message });
    else if (message.role === 'assistant') {
      if (message.is_plan) entries.push({ kind: 'plan', message });
      else if (message.is_summary) entries.push({ kind: 'summary', message });
      else if (message.content || message.thinking || message.stopped || !message.tool_calls?.length) entries.push({ kind: 'assistant', message });
      for (const call of message.tool_calls ?? []) {
        const entry = { kind: 'tool', call };
        calls.set(call.id, entry);
        entries.push(entry);
      }
    } else if (message.role === 'tool') {
      const entry = calls.get(message.tool_call_id);
      if (entry && !entry.result) entry.result = message;
      else entries.push({ kind: 'tool', call: { id: message.tool_call_id, name: message.name ?? 'tool', arguments: {} }, result: message });
    }
  }
  return entries;
}

/** `decisions`: the person's stored decisions by call id, shown on the cards of calls that asked. */
function entryNode(entry, decisions) {
  switch (entry.kind) {
    case 'user':
      return userItem(entry.message);
    case 'marker':
      return profileMarker(entry.message.profile_switch.profile_name);
    case 'previous':
      return previousVersion(entry.entries.map((inner) => entryNode(inner, decisions)));
    case 'plan':
      return planItem(entry.message.content);
    case 'summary':
      return summaryItem(entry.message.content);
    case 'assistant':
      return AssistantItem.fromMessage(entry.message).node;
    case 'tool': {
      const card = new ToolCard({ callId: entry.call.id, tool: entry.call.name, args: entry.call.arguments });
      const decided = decisions?.get(entry.call.id);
      if (decided) card.resolveApproval({ call_id: entry.call.id, ...decided });
      if (entry.result) card.complete({ result: entry.result.content, success: entry.result.success !== false });
      return card.node;
    }
  }
}

async function copyCode(button) {
  const code = button.closest('.code-block').querySelector('code').textContent;
  try {
    await navigator.clipboard.writeText(code);
    button.textContent = 'Copied';
  } catch {
    button.textContent = 'Copy failed';
  }
  setTimeout(() => (button.textContent = 'Copy'), 1500);
}

/**
 * The conversation as the person sees it: the stored history, then the live run drawn from the
 * event union of docs/protocol.md, "The session WebSocket". Rounds of one run become an answer, tool cards, the next answer…
 */
export class Transcript {
  #run;
  #generation = 0;

  /**
   * `decide(callId, {decision, remember})` sends the person's answer to a waiting tool call; it rejects on failure.
   * `regenerate()` asks for the last answer again; `edit({messageId, ordinal, text})` resends an edited message
   * (`ordinal`: its place among the messages not superseded, for one sent from this page, whose id it does not know);
   * both resolve true once sent.
   */
  constructor(container, { decide, regenerate = async () => false, edit = async () => false } = {}) {
    this.container = container;
    this.decide = decide;
    this.regenerate = regenerate;
    this.edit = edit;
    this.follow = new ScrollFollow(container);
    this.scheduler = new FrameScheduler();
    this.scheduler.onAfterRender = () => this.follow.keep();
    container.addEventListener('click', (event) => {
      const button = event.target.closest('button');
      if (button?.classList.contains('copy-code')) copyCode(button);
      else if (button?.classList.contains('copy-answer')) copyAnswer(button);
      else if (button?.classList.contains('regenerate-answer')) this.regenerate();
      else if (button?.classList.contains('edit-message')) this.#openEditor(button.closest('.item.user'));
    });
  }

  get running() {
    return this.#run !== undefined;
  }

  clear(placeholder) {
    this.#generation += 1;
    this.#run = undefined;
    delete this.container.dataset.working;
    delete this.container.dataset.runStatus;
    this.scheduler.countFrames(false);
    this.container.replaceChildren(...(placeholder ? [element('div', { className: 'transcript-empty' }, placeholder)] : []));
    this.follow.toEnd();
  }

  /**
   * Draws stored messages (the display buffer). The newest entries are drawn at once; older ones
   * are drawn above them in slices of a few milliseconds, yielding to the browser in between, so a
   * long session opens without waiting for all of it and stays responsive while the rest goes in.
   * Resolves true when everything is drawn, false when the transcript was cleared meanwhile.
   */
  renderHistory(messages, decisions) {
    this.clear();
    const entries = historyEntries(messages);
    const newest = entries.splice(Math.max(0, entries.length - firstSliceEntries));
    this.container.append(...newest.map((entry) => entryNode(entry, decisions)));
    this.#placeRegenerate();
    this.follow.toEnd();
    return this.#drawOlder(entries, this.#generation, decisions);
  }

  async #drawOlder(entries, generation, decisions) {
    while (entries.length > 0) {
      await yieldToBrowser();
      if (generation !== this.#generation) return false;
      const sliceStarted = performance.now();
      const slice = [];
      while (entries.length > 0 && performance.now() - sliceStarted < sliceBudgetMs) slice.unshift(entryNode(entries.pop(), decisions));
      // One block a slice: the browser lays out the new block alone, and skips blocks out of view
      // (content-visibility), so each slice costs the same however much is drawn already.
      // Scroll anchoring keeps the entries in view where they are while older ones go in above.
      this.container.prepend(element('div', { className: 'history-block' }, slice));
    }
    return generation === this.#generation;
  }

  /** The person's own message is always brought into view, wherever they had scrolled. */
  appendUser(message) {
    this.#append(userItem(message));
    this.follow.toEnd();
  }

  appendNotice(text) {
    this.#append(noticeItem(text));
  }

  /** Applies one run event; what it grew or opened (a failed call's result) stays in view while following. */
  apply(event) {
    this.#applyEvent(event);
    this.follow.keep();
  }

  /** Events that are not about the transcript are ignored here. */
  #applyEvent(event) {
    switch (event.type) {
      case 'stream_start':
        this.#endRun({ stopped: false });
        this.#currentRun();
        this.container.dataset.working = 'true';
        this.scheduler.countFrames(true);
        return;
      case 'run_status':
        // The status line under the run says "Queued" while a model call waits for a free place (LLM_MAX_CONCURRENT).
        if (event.status === 'queued') this.container.dataset.runStatus = 'queued';
        else delete this.container.dataset.runStatus;
        return;
      case 'plan_ready':
        this.#closeAnswer();
        this.#append(planItem(event.plan));
        return;
      case 'thinking_delta':
        this.#answer().appendThinking(event.delta);
        this.scheduler.schedule(this.#run.answer);
        return;
      case 'thinking_end':
        this.scheduler.flush();
        this.#run?.answer?.endThinking();
        return;
      case 'stream_delta':
        this.#answer().appendText(event.delta);
        this.scheduler.schedule(this.#run.answer);
        return;
      case 'turn_thinking':
        if (event.is_subagent) this.#subagentSlot().append(foldable('Sub-agent reasoning', element('div', { className: 'thinking-text' }, event.thinking), { className: 'thinking' }));
        return;
      case 'tool_started':
        this.#toolCard(event);
        return;
      case 'tool_call':
        this.#toolCard(event).complete(event);
        return;
      case 'approval_required': {
        const card = this.#toolCard(event);
        const approval = card.requestApproval(event, (choice) => this.decide(event.call_id, choice));
        this.follow.keep();
        approval.offerFocus();
        return;
      }
      case 'approval_resolved':
        // The event names no agent: the waiting card with that id is the one (a run waits for one call at a time).
        this.#waitingApproval(event.call_id)?.resolveApproval(event);
        return;
      case 'stream_end':
        this.#finishAnswer({ content: event.content });
        this.#endRun({ stopped: false });
        return;
      case 'stream_stopped':
        this.#finishAnswer({
          content: event.content,
          stopped: true,
          always: true,
          ...(event.reason === 'shutdown' && { stoppedLabel: 'Stopped: the server shut down' }),
        });
        this.#endRun({ stopped: true });
        return;
      case 'session_sync':
        if (!event.running) this.#endRun({ stopped: false });
        return;
      case 'error':
        this.#closeAnswer();
        this.#append(errorItem(event, () => this.regenerate()));
        return;
      case 'profile_switched':
        this.#append(profileMarker(event.profile_name));
        return;
      case 'context_compressed':
        this.appendNotice(`Older messages were summarised to keep the model's context small (${event.messages_before} → ${event.messages_after} messages).`);
        return;
      default:
        return;
    }
  }

  #append(node) {
    this.#removePlaceholder();
    this.container.append(node);
    this.follow.added();
  }

  #removePlaceholder() {
    this.container.querySelector(':scope > .transcript-empty')?.remove();
  }

  /** The run being drawn; events of a run whose stream_start was not seen start one too. */
  #currentRun() {
    this.#run ??= { answer: undefined, cards: new Map() };
    return this.#run;
  }

  /** The answer being streamed in this round, started on its first delta. */
  #answer() {
    if (!this.#currentRun().answer) {
      const answer = new AssistantItem();
      answer.streaming = true;
      this.#run.answer = answer;
      this.#append(answer.node);
    }
    return this.#run.answer;
  }

  /** Ends the round's answer before tool cards or a plan; an answer with nothing in it is removed. */
  #closeAnswer() {
    const answer = this.#run?.answer;
    if (!answer) return;
    this.scheduler.flush();
    if (answer.isEmpty) answer.node.remove();
    else answer.finish();
    this.#run.answer = undefined;
  }

  #finishAnswer({ content, stopped = false, always = false, stoppedLabel }) {
    this.scheduler.flush();
    const answer = this.#run?.answer ?? (content || always ? this.#answer() : undefined);
    answer?.finish({ content, stopped, stoppedLabel });
    if (this.#run) this.#run.answer = undefined;
  }

  #endRun({ stopped }) {
    if (!this.#run) return;
    this.#closeAnswer();
    for (const card of this.#run.cards.values()) {
      if (card.approval?.waiting) card.resolveApproval({ call_id: card.approval.callId, decision: 'deny', by: 'stop' });
      if (card.node.dataset.status === 'pending') card.complete({ result: stopped ? 'Stopped before it finished.' : 'No result arrived.', success: false });
    }
    this.#run = undefined;
    delete this.container.dataset.working;
    this.scheduler.countFrames(false);
    this.#placeRegenerate();
  }

  /** Regenerate sits under the latest answer only, and only between runs. */
  #placeRegenerate() {
    this.container.querySelector('.regenerate-answer')?.remove();
    if (this.#run) return;
    const answers = [...this.container.querySelectorAll('.item.assistant')].filter((node) => !node.closest('.previous-version'));
    answers.at(-1)?.querySelector('.message-actions')?.append(regenerateButton());
  }

  #openEditor(item) {
    const current = [...this.container.querySelectorAll('.item.user')].filter((node) => !node.closest('.previous-version'));
    const messageId = item.dataset.messageId === undefined ? undefined : Number(item.dataset.messageId);
    openEditor(item, (text) => this.edit({ messageId, ordinal: current.indexOf(item), text }));
  }

  #waitingApproval(callId) {
    for (const card of this.#run?.cards.values() ?? []) if (card.approval?.waiting && card.approval.callId === callId) return card;
    return undefined;
  }

  /** Where a sub-agent's activity goes: inside the spawn_agent card that is still running. */
  #subagentSlot() {
    const cards = [...(this.#run?.cards.values() ?? [])];
    const parent = cards.reverse().find((card) => card.subagentActivity && card.node.dataset.status === 'pending');
    return parent?.subagentActivity ?? this.container;
  }

  #toolCard(event) {
    this.#currentRun();
    // A sub-agent numbers its calls on its own, so its ids may repeat the parent's.
    const key = `${event.is_subagent ? 'subagent' : 'agent'}:${event.call_id}`;
    const known = this.#run.cards.get(key);
    if (known) return known;
    const card = new ToolCard({ callId: event.call_id, tool: event.tool, args: event.args, subagent: event.is_subagent });
    if (event.is_subagent) {
      const slot = this.#subagentSlot();
      this.#run.cards.set(key, card);
      if (slot === this.container) this.#append(card.node);
      else slot.append(card.node);
      return card;
    }
    this.#closeAnswer();
    this.#run.cards.set(key, card);
    this.#append(card.node);
    return card;
  }
}
