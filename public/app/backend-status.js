import { element, replaceContent, withInlineCode } from './dom.js';

const backendNames = { ollama: 'Ollama', openai: 'OpenAI-compatible' };

/**
 * Which backend and model Hearth talks to and whether they answered the server's last check
 * (docs/protocol.md, "REST API", `GET /status`): a small line in the header, and a banner under it with what is wrong and
 * the fix while the backend is unreachable or lacks the model. `show(status)` takes the `backend`
 * of `hello` and `backend_status` on /ws/events. The line names the model in use
 * (`showModelInUse`): the session's pick or its profile's, which the server's check may not cover.
 * While Ollama loads that model (`model_loading` on /ws/events) the line says *loading model*;
 * a missing Ollama model's banner carries `offer()`'s node, the page's one-click pull.
 */
export class BackendStatusView {
  #status;
  #inUse = {};
  /** The model a `model_loading` event says Ollama is loading now ('' when none). */
  #loading = '';

  /** `onShown({backend, model, state})` hears what the line shows each time it changes. */
  constructor(header, { offer, onShown = () => {} } = {}) {
    this.offer = offer;
    this.onShown = onShown;
    this.text = element('span', { className: 'backend-status-text' });
    this.summary = element('span', { className: 'backend-status', dataset: { state: 'unknown' }, 'aria-label': 'Backend status' }, this.text);
    this.banner = element('div', { id: 'backend-banner', className: 'backend-banner', role: 'alert', hidden: true });
    const gauge = header.querySelector('.context-gauge');
    if (gauge) gauge.before(this.summary);
    else header.append(this.summary);
    header.after(this.banner);
  }

  show(status) {
    if (!status) return;
    this.#status = status;
    this.#render();
    const state = stateOf(status);
    const problem = state === 'unreachable' || state === 'model-missing';
    this.banner.hidden = !problem;
    if (!problem) return this.banner.replaceChildren();
    replaceContent(
      this.banner,
      element('span', { className: 'backend-message' }, withInlineCode(status.message ?? '')),
      status.fix && element('span', { className: 'backend-fix' }, ' ', withInlineCode(`${status.fix}.`)),
      state === 'model-missing' && status.backend === 'ollama' && this.offer?.(),
    );
  }

  /** The last status the server sent (undefined before `hello`). */
  get status() {
    return this.#status;
  }

  /** A `model_loading` event: the line says *loading model* while the model in use loads. */
  showLoading({ name, state }) {
    if (state === 'loading') this.#loading = name;
    else if (this.#loading === name) this.#loading = '';
    this.#render();
  }

  /** The backend id (empty for the default one) and model the open session, or a new one, uses. */
  showModelInUse({ backend = '', model = '' }) {
    this.#inUse = { backend, model };
    this.#render();
  }

  /** The model the line names ('' before the first status). */
  get model() {
    return this.#inUse.model || this.#status?.model || '';
  }

  #render() {
    const status = this.#status;
    if (!status) return;
    const backend = this.#inUse.backend || status.backend;
    const model = this.#inUse.model || status.model || 'no model';
    // The server checks its default backend and model: another backend is not checked, another model of it is as reachable as it.
    let state = backend === status.backend ? stateOf(status) : 'unchecked';
    if (state === 'model-missing' && model !== status.model) state = 'reachable';
    if (this.#loading && this.#loading === model && state !== 'unreachable') state = 'loading';
    const name = backendNames[backend] ?? backend;
    this.summary.dataset.state = state;
    this.text.textContent = `${name} · ${model} · ${stateWords[state]}`;
    this.summary.title =
      state === 'unchecked'
        ? `${name}: Hearth checks only its default backend`
        : `${name} at ${status.url || '(not set)'}${status.checked_at ? `, checked ${new Date(status.checked_at).toLocaleTimeString()}` : ''}`;
    this.onShown({ backend, model: this.#inUse.model || status.model || '', state });
  }
}

const stateWords = { unknown: 'checking…', reachable: 'reachable', unreachable: 'unreachable', 'model-missing': 'model missing', unchecked: 'not checked', loading: 'loading model' };

function stateOf(status) {
  if (status.reachable === null || status.reachable === undefined) return 'unknown';
  if (!status.reachable) return 'unreachable';
  return status.model_available ? 'reachable' : 'model-missing';
}
