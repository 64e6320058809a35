import { element } from './dom.js';

const choices = [
  { label: 'Allow once', decision: 'allow', remember: 'once', className: 'primary' },
  { label: 'Allow for this session', decision: 'allow', remember: 'session', className: '' },
  { label: 'Deny', decision: 'deny', remember: 'once', className: 'deny' },
];

/** Who looks at the page (GET /me), so a decision someone else took names them instead of "you". */
let viewer;

export function setApprovalViewer(person) {
  viewer = person;
}

/** "Ann", "Ann or Ben", "Ann, Ben or Cy": who may decide a call. */
export function namesOf(people) {
  const names = (people ?? []).map((person) => person.name);
  if (names.length === 0) return 'the owner';
  return names.length === 1 ? names[0] : `${names.slice(0, -1).join(', ')} or ${names.at(-1)}`;
}

/** What the card says once decided (docs/agent.md, "Approvals"; `by` is user, rule, timeout or stop; `decider` who, in a household). */
export function outcomeText({ decision, by, remember, decider }) {
  const who = decider && viewer && decider.id !== viewer.id ? decider.name : 'you';
  if (decision === 'allow') {
    if (by === 'user') return remember === 'session' ? (who === 'you' ? 'Allowed for this session' : `Allowed for this session by ${who}`) : `Allowed by ${who}`;
    if (by === 'rule') return 'Allowed by a rule';
    return 'Allowed';
  }
  switch (by) {
    case 'user':
      return `Denied by ${who}`;
    case 'timeout':
      return 'Denied: nobody answered in time';
    case 'stop':
      return 'Denied: the run was stopped';
    case 'rule':
      return 'Refused by a rule';
    default:
      return 'Denied';
  }
}

/** "9:41", or "1:02:03" past an hour. */
export function formatTimeLeft(ms) {
  const total = Math.max(0, Math.ceil(ms / 1000));
  const hours = Math.floor(total / 3600);
  const minutes = Math.floor((total % 3600) / 60);
  const seconds = String(total % 60).padStart(2, '0');
  return hours > 0 ? `${hours}:${String(minutes).padStart(2, '0')}:${seconds}` : `${minutes}:${seconds}`;
}

/** One timer for every waiting card on the page; cards that left the page drop out on the next tick. */
const ticking = new Set();
let ticker;

function tick() {
  for (const card of ticking) {
    if (!card.node.isConnected || card.state === 'resolved') ticking.delete(card);
    else card.showTimeLeft();
  }
  if (ticking.size === 0) {
    clearInterval(ticker);
    ticker = undefined;
  }
}

function startTicking(card) {
  ticking.add(card);
  ticker ??= setInterval(tick, 1000);
}

/** Whether the person is typing somewhere; a card that appears then does not take the focus. */
function personIsTyping() {
  const active = document.activeElement;
  if (!active || active === document.body || active.disabled) return false;
  if (document.querySelector('dialog[open]')) return true;
  return active.matches('input:not([type=button]):not([type=submit]):not([type=checkbox]):not([type=radio]), textarea, select, [contenteditable]:not([contenteditable=false])');
}

function reasonLine(reason) {
  if (!reason) return null;
  const rule = /^rule (.+)$/s.exec(reason);
  return element(
    'p',
    { className: 'approval-reason' },
    rule ? ['Your profile asks first for ', element('code', {}, rule[1]), '.'] : reason,
  );
}

/** "`-D` writes a file" with the backticked parts as code. */
function withCode(text) {
  return text.split(/`([^`]*)`/).map((part, index) => (index % 2 === 1 ? element('code', {}, part) : part));
}

/** Why the command missed the profile's `readonly` rule (docs/agent.md, "Approvals"), when it did. */
function notReadOnlyLine(notReadOnly) {
  if (!notReadOnly) return null;
  return element('p', { className: 'approval-not-read-only', dataset: { role: 'not-read-only' } }, 'Not read-only: ', ...withCode(notReadOnly), '.');
}

/**
 * The question inside a tool card whose call waits for the person (docs/agent.md, "Approvals"): the subject in
 * full, why it asks, Allow once / Allow for this session / Deny, and the time left before it is
 * denied unanswered. `onDecide(choice)` sends `{decision, remember}` and rejects on failure.
 * Once resolved it says who decided and the buttons go. In a household a call the viewer may not
 * decide (`canDecide: false`, a child's own ask) says whom it waits for and has no buttons.
 */
export class ApprovalCard {
  #choice;

  /** `action`: what allowing does, in the question ("run", or "install" for a tool the agent wrote). */
  constructor({ callId, subject, reason, notReadOnly, expiresAt, onDecide, canDecide = true, deciders = [], question, action = 'run' }) {
    this.callId = callId;
    this.canDecide = canDecide;
    this.state = 'waiting';
    this.expiresAt = Date.parse(expiresAt);
    this.onDecide = onDecide;
    this.timer = element('p', { className: 'approval-timer', role: 'timer' });
    this.error = element('p', { className: 'approval-error', role: 'alert', hidden: true });
    this.buttons = choices.map((choice) =>
      element('button', { type: 'button', className: choice.className, 'aria-label': choice.label, onclick: () => this.#decide(choice) }, choice.label),
    );
    this.actions = canDecide ? element('div', { className: 'approval-actions' }, this.buttons) : null;
    this.outcome = element('p', { className: 'approval-outcome', role: 'status' });
    this.question = element('p', { className: 'approval-question' }, question ?? (canDecide ? `Waiting for your approval to ${action}:` : `Waiting for ${namesOf(deciders)} to decide whether to ${action}:`));
    this.reason = reasonLine(reason);
    this.notReadOnly = notReadOnlyLine(notReadOnly);
    this.node = element(
      'section',
      { className: 'approval', tabindex: '-1', role: 'group', 'aria-label': canDecide ? 'Approval needed' : 'Approval asked', dataset: { role: 'approval', state: 'waiting', callId, canDecide: String(canDecide) } },
      this.question,
      element('pre', { className: 'approval-subject' }, subject),
      this.reason,
      this.notReadOnly,
      this.actions,
      this.timer,
      this.error,
      this.outcome,
    );
    this.showTimeLeft();
    startTicking(this);
  }

  /** A decision already taken, as the stored audit tells it (a reloaded session). */
  static decided({ callId, subject, decision, by, remember, decider }) {
    const card = new ApprovalCard({ callId, subject, expiresAt: new Date().toISOString(), onDecide: () => Promise.reject(new Error('already decided')) });
    card.resolve({ decision, by, remember, decider });
    return card;
  }

  get waiting() {
    return this.state !== 'resolved';
  }

  showTimeLeft() {
    if (Number.isNaN(this.expiresAt)) {
      this.timer.hidden = true;
      return;
    }
    this.timer.textContent = `Denied automatically in ${formatTimeLeft(this.expiresAt - Date.now())}`;
  }

  /** Takes the focus unless the person is typing elsewhere, so the keyboard is one Tab from the buttons. */
  offerFocus() {
    if (!this.waiting || !this.canDecide || personIsTyping()) return;
    this.node.focus();
  }

  /**
   * `approval_resolved`: who decided heads the card, above the subject, and the question goes.
   * `remember` comes with the event (a stored decision read after a reload carries it too). The focus goes back to the page, so the
   * message box takes it when the run ends (or the next card when one asks).
   */
  resolve({ decision, by, remember, decider }) {
    if (this.node.contains(document.activeElement)) document.activeElement.blur();
    this.state = 'resolved';
    ticking.delete(this);
    const own = this.#choice?.decision === decision && by === 'user' ? this.#choice.remember : undefined;
    this.node.dataset.state = 'resolved';
    this.node.dataset.decision = decision;
    this.node.dataset.by = by;
    this.node.setAttribute('aria-label', 'Approval');
    this.node.removeAttribute('tabindex');
    for (const part of [this.question, this.reason, this.notReadOnly, this.actions, this.timer, this.error]) part?.remove();
    this.outcome.textContent = outcomeText({ decision, by, remember: remember ?? own, decider });
    this.node.prepend(this.outcome);
  }

  async #decide(choice) {
    if (this.state !== 'waiting') return;
    this.#choice = choice;
    this.#setDeciding(true);
    try {
      await this.onDecide({ decision: choice.decision, remember: choice.remember });
    } catch (error) {
      if (this.state === 'resolved') return;
      if (error.code === 'approval_not_found') {
        // Decided meanwhile (another tab, the timeout): its approval_resolved is on its way.
        this.#showError('This call is no longer waiting for a decision.');
        return;
      }
      this.#choice = undefined;
      this.#setDeciding(false);
      this.#showError(`Your decision did not reach Hearth: ${error.message} Try again.`);
    }
  }

  #setDeciding(deciding) {
    if (this.state === 'resolved') return;
    const hadFocus = this.node.contains(document.activeElement);
    this.state = deciding ? 'deciding' : 'waiting';
    this.node.dataset.state = this.state;
    for (const button of this.buttons) button.disabled = deciding;
    this.actions?.setAttribute('aria-busy', String(deciding));
    if (deciding) this.error.hidden = true;
    // A disabled button drops the focus to the page; the card keeps it instead.
    if (deciding && hadFocus) this.node.focus({ preventScroll: true });
  }

  #showError(message) {
    this.error.textContent = message;
    this.error.hidden = false;
  }
}
