import { api } from './api.js';

/**
 * Finds the Ollama model the conversation needs and the machine lacks, for PullOffer: the server's
 * check says so of its default model (`model-missing`); a profile's or session's other model is
 * looked up in GET /models, read only when such a model is in use and again after `models_changed`.
 */
export class MissingModel {
  #shown = { backend: '', model: '', state: 'unknown' };
  /** The default backend's local model names, once read (undefined before). */
  #local;
  #reading;

  constructor(pullOffer) {
    this.pullOffer = pullOffer;
  }

  /** What the header's backend line shows (BackendStatusView's onShown). */
  shown(line) {
    this.#shown = line;
    this.#decide();
  }

  /** A model was pulled or deleted: the local list is read again (if it was ever needed). */
  modelsChanged() {
    const needed = this.#local !== undefined || this.#shown.state === 'model-missing';
    this.#local = undefined;
    if (needed && this.#shown.backend === 'ollama') void this.#read();
  }

  #decide() {
    const { backend, model, state } = this.#shown;
    if (backend !== 'ollama' || !model || (state !== 'model-missing' && state !== 'reachable')) return this.pullOffer.set('');
    // A pull that just ended shows in the list before the server's next check of its default model.
    if (this.#local?.has(withTag(model))) return this.pullOffer.set('');
    if (state === 'model-missing') return this.pullOffer.set(model);
    if (this.#local === undefined) {
      this.pullOffer.set('');
      return void this.#read();
    }
    this.pullOffer.set(this.#local.has(withTag(model)) ? '' : model);
  }

  async #read() {
    this.#reading ??= api
      .models()
      .then(
        ({ backend, models }) => (this.#local = backend === 'ollama' ? new Set(models.map((entry) => withTag(entry.name))) : new Set()),
        () => (this.#local = undefined),
      )
      .finally(() => (this.#reading = undefined));
    await this.#reading;
    if (this.#local !== undefined) this.#decide();
  }
}

/** Ollama's name for a model given without a tag. */
function withTag(name) {
  return name.includes(':') ? name : `${name}:latest`;
}
