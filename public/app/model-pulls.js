import { api } from './api.js';
import { element, withInlineCode } from './dom.js';
import { modelBytes } from './model-sizes.js';

/**
 * The model pulls running on Hearth's Ollama, shown on every open page: one `<progress>` bar a pull
 * with Ollama's status line and Cancel, from `model_pull` on /ws/events (and `hello`'s
 * `model_pulls`, so a reload mid-pull shows it again). A pull that ends leaves; a failed one
 * stays with its reason until dismissed. `mayControl()` says whether this person may start and
 * cancel pulls (the owner, once people exist).
 */
export class ModelPulls {
  /** name → the latest PullState ({name, status, completed?, total?, state, error?}). */
  #pulls = new Map();
  #listeners = new Set();
  /** name → {kind, node, update?}: what the region shows of each pull. */
  #views = new Map();

  constructor(region, { mayControl = () => true } = {}) {
    this.region = region;
    this.mayControl = mayControl;
  }

  /** `listener()` runs whenever a pull starts, moves or ends. */
  onChange(listener) {
    this.#listeners.add(listener);
  }

  /** The pulls `hello` lists: what runs now, replacing whatever the page had before it reconnected (failures it showed stay). */
  reset(pulls = []) {
    for (const [name, pull] of this.#pulls) if (pull.state !== 'failed') this.#pulls.delete(name);
    for (const pull of pulls) this.#pulls.set(pull.name, pull);
    this.#changed();
  }

  /** A `model_pull` event. */
  receive({ type, ...pull }) {
    if (pull.state === 'done' || pull.state === 'cancelled') this.#pulls.delete(pull.name);
    else this.#pulls.set(pull.name, pull);
    this.#changed();
  }

  isPulling(name) {
    return this.#pulls.get(name)?.state === 'pulling';
  }

  /** Asks Hearth to pull `name`; its bar shows at once, and a refusal shows as that pull's failure. */
  async start(name) {
    if (this.isPulling(name)) return;
    this.#pulls.set(name, { name, status: 'starting', state: 'pulling' });
    this.#changed();
    try {
      await api.pullModel(name);
    } catch (error) {
      // Already running (another page started it): its events show it.
      if (error.code === 'pull_running') return;
      this.#pulls.set(name, { name, status: '', state: 'failed', error: error.message });
      this.#changed();
    }
  }

  async #cancel(name, button) {
    button.disabled = true;
    try {
      await api.cancelPull(name);
    } catch (error) {
      // It ended meanwhile (404): its last event says how.
      const pull = this.#pulls.get(name);
      if (error.status !== 404 && pull) this.#pulls.set(name, { ...pull, error: `Could not cancel: ${error.message}` });
    }
    this.#changed();
  }

  #dismiss(name) {
    this.#pulls.delete(name);
    this.#changed();
  }

  #changed() {
    this.#render();
    for (const listener of this.#listeners) listener();
  }

  /** Each pull keeps its node while it runs (only its bar and text move), so Cancel stays under the pointer. */
  #render() {
    this.region.hidden = this.#pulls.size === 0;
    for (const [name, view] of this.#views) {
      const pull = this.#pulls.get(name);
      if (!pull || (pull.state === 'failed') !== (view.kind === 'failed')) {
        view.node.remove();
        this.#views.delete(name);
      }
    }
    for (const pull of this.#pulls.values()) {
      let view = this.#views.get(pull.name);
      if (!view) {
        view = pull.state === 'failed' ? this.#failure(pull) : this.#progress(pull);
        this.#views.set(pull.name, view);
        this.region.append(view.node);
      }
      view.update?.(pull);
    }
  }

  #progress(pull) {
    const bar = element('progress', { 'aria-label': `Pulling ${pull.name}` });
    const status = element('div', { className: 'model-pull-status', dataset: { role: 'pull-status' } });
    const problem = element('p', { className: 'panel-error', role: 'alert', hidden: true });
    const node = element(
      'div',
      { className: 'model-pull', dataset: { modelPull: pull.name, state: 'pulling' } },
      element('div', { className: 'model-pull-title' }, 'Pulling ', element('code', {}, pull.name)),
      bar,
      status,
      problem,
      this.mayControl() && element('button', { type: 'button', 'aria-label': `Cancel pulling ${pull.name}`, onclick: (event) => this.#cancel(pull.name, event.currentTarget) }, 'Cancel'),
    );
    const update = ({ completed = 0, total, status: line, error }) => {
      const known = typeof total === 'number' && total > 0;
      // Without a total yet the bar is indeterminate (no value).
      if (known) {
        bar.max = total;
        bar.value = Math.min(completed, total);
      } else bar.removeAttribute('value');
      status.textContent = `${line || 'waiting'}${known ? ` · ${modelBytes(completed)} of ${modelBytes(total)} (${Math.floor((100 * Math.min(completed, total)) / total)}%)` : ''}`;
      problem.hidden = !error;
      problem.textContent = error ?? '';
    };
    return { kind: 'pulling', node, update };
  }

  #failure(pull) {
    const node = element(
      'div',
      { className: 'model-pull', dataset: { modelPull: pull.name, state: 'failed' } },
      element('p', { className: 'model-pull-error', role: 'alert' }, 'Could not pull ', element('code', {}, pull.name), ': ', withInlineCode(pull.error || 'the pull failed')),
      element('button', { type: 'button', 'aria-label': `Dismiss the failed pull of ${pull.name}`, onclick: () => this.#dismiss(pull.name) }, 'Dismiss'),
    );
    return { kind: 'failed', node };
  }
}
