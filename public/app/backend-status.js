import { element, replaceContent, withInlineCode } from './dom.js';

const backendNames = { ollama: 'Ollama', openai: 'OpenAI-compatible' };

/**
 * Which backend and model Hearth talks to and whether they answered the server's last check
 * (docs/protocol.md, "REST API", `GET /status`): a small line in the header, and a banner under it with what is wrong and
 * the fix while the backend is unreachable or lacks the model. `show(status)` takes the `backend`
 * of `hello` and `backend_status` on /ws/events.
 */
export class BackendStatusView {
  constructor(header) {
    this.summary = element('span', { className: 'backend-status', dataset: { state: 'unknown' }, 'aria-label': 'Backend status' });
    this.banner = element('div', { id: 'backend-banner', className: 'backend-banner', role: 'alert', hidden: true });
    const gauge = header.querySelector('.context-gauge');
    if (gauge) gauge.before(this.summary);
    else header.append(this.summary);
    header.after(this.banner);
  }

  show(status) {
    if (!status) return;
    const state = stateOf(status);
    this.summary.dataset.state = state;
    const name = backendNames[status.backend] ?? status.backend;
    const model = status.model || 'no model';
    this.summary.textContent = `${name} · ${model} · ${stateWords[state]}`;
    this.summary.title = `${name} at ${status.url || '(not set)'}${status.checked_at ? `, checked ${new Date(status.checked_at).toLocaleTimeString()}` : ''}`;
    const problem = state === 'unreachable' || state === 'model-missing';
    this.banner.hidden = !problem;
    if (!problem) return this.banner.replaceChildren();
    replaceContent(
      this.banner,
      element('span', { className: 'backend-message' }, withInlineCode(status.message ?? '')),
      status.fix && element('span', { className: 'backend-fix' }, ' ', withInlineCode(`${status.fix}.`)),
    );
  }
}

const stateWords = { unknown: 'checking…', reachable: 'reachable', unreachable: 'unreachable', 'model-missing': 'model missing' };

function stateOf(status) {
  if (status.reachable === null || status.reachable === undefined) return 'unknown';
  if (!status.reachable) return 'unreachable';
  return status.model_available ? 'reachable' : 'model-missing';
}
