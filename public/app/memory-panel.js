import { api } from './api.js';
import { element, replaceContent } from './dom.js';
import { icon } from './icons.js';
import { failure, heading, load } from './panel-frame.js';

/** Long-term memory (`/memory`): the narrative summary and the facts, each editable and deletable. */
export class MemoryPanel {
  name = 'Memory';
  #editing;

  /** `role()` names the role of who uses the page: a guest's page says guests keep no memory. */
  constructor(aside, { role = () => undefined } = {}) {
    this.aside = aside;
    this.role = role;
  }

  async refresh() {
    const memory = await load(this.aside, this.name, () => api.memory(), () => this.refresh());
    if (!memory) return;
    const byCategory = Map.groupBy(memory.facts, (fact) => fact.category);
    replaceContent(
      this.aside,
      heading(this.name, () => this.refresh()),
      element(
        'p',
        { className: 'memory-summary' },
        this.role() === 'guest'
          ? 'Guests keep no memory: nothing said in your sessions is remembered after them.'
          : memory.summary || 'Nothing remembered yet. Hearth writes down what it learns about you after a conversation has been idle for a while.',
      ),
      [...byCategory].map(([category, facts]) =>
        element('section', {}, element('h3', {}, category), element('ul', { className: 'fact-list' }, facts.map((fact) => this.#fact(fact)))),
      ),
    );
  }

  #fact(fact) {
    if (this.#editing === fact.id) {
      const input = element('input', { type: 'text', 'aria-label': 'Fact value', value: fact.value });
      const save = async (event) => {
        event.preventDefault();
        this.#editing = undefined;
        await this.#run(() => api.saveFact({ category: fact.category, key: fact.key, value: input.value.trim() }));
      };
      queueMicrotask(() => input.focus());
      return element(
        'li',
        { dataset: { factId: String(fact.id) } },
        element(
          'form',
          { className: 'fact-edit', onsubmit: save },
          element('label', {}, element('strong', {}, fact.key), input),
          element('button', { type: 'submit', className: 'primary' }, 'Save'),
          element('button', { type: 'button', onclick: () => ((this.#editing = undefined), this.refresh()) }, 'Cancel'),
        ),
      );
    }
    return element(
      'li',
      { dataset: { factId: String(fact.id) } },
      element('div', { className: 'fact-text' }, element('strong', {}, fact.key), ' ', element('span', {}, fact.value)),
      element(
        'div',
        { className: 'fact-actions' },
        element('button', { type: 'button', className: 'icon-button', 'aria-label': `Edit ${fact.key}`, title: 'Edit', onclick: () => ((this.#editing = fact.id), this.refresh()) }, icon('edit')),
        element('button', { type: 'button', className: 'icon-button', 'aria-label': `Delete ${fact.key}`, title: 'Delete', onclick: () => this.#run(() => api.deleteFact(fact.id)) }, icon('trash')),
      ),
    );
  }

  async #run(change) {
    try {
      await change();
    } catch (error) {
      this.aside.append(failure(error));
      return;
    }
    await this.refresh();
  }
}

