import { element, replaceContent } from './dom.js';
import { pullLabel } from './model-sizes.js';

/**
 * The one-click way past a missing model: "Pull qwen3:8b (5.2 GB)" where the conversation would
 * otherwise only say that the model is missing (the empty state, the backend banner). `set(model)`
 * names the model to offer ('' for none); each place asks for its node with `place(slot)`, which
 * stays live (the offer follows the model and its pull) until that slot is placed again.
 */
export class PullOffer {
  #model = '';
  #places = new Map();

  /** `pulls` is the page's ModelPulls; `mayPull()` whether this person may pull (the owner, once people exist). */
  constructor({ pulls, mayPull = () => true }) {
    this.pulls = pulls;
    this.mayPull = mayPull;
    pulls.onChange(() => this.#render());
  }

  get model() {
    return this.#model;
  }

  set(model) {
    if (model === this.#model) return;
    this.#model = model;
    this.#render();
  }

  /** The node for one place (`'empty-state'`, `'banner'`); it replaces that place's previous node. */
  place(slot) {
    const node = element('div', { className: 'pull-offer', dataset: { pullOffer: slot } });
    this.#places.set(slot, node);
    this.#fill(node);
    return node;
  }

  /** Draws the offer again (who may pull became known). */
  refresh() {
    this.#render();
  }

  #render() {
    for (const node of this.#places.values()) this.#fill(node);
  }

  #fill(node) {
    const model = this.#model;
    node.hidden = !model || !this.mayPull();
    if (node.hidden) return node.replaceChildren();
    const pulling = this.pulls.isPulling(model);
    replaceContent(
      node,
      // The banner says what is missing already; the empty state says it here.
      node.dataset.pullOffer === 'empty-state' && element('p', {}, element('code', {}, model), ' is not on this machine yet. Pull it, and your first message can go.'),
      element(
        'button',
        { type: 'button', className: 'primary', disabled: pulling, onclick: () => this.pulls.start(model) },
        pulling ? `Pulling ${model}…` : pullLabel(model),
      ),
    );
  }
}
