import { api } from './api.js';
import { element, replaceContent } from './dom.js';
import { icon } from './icons.js';
import { summaryItem } from './transcript-items.js';

function heading(text, onRefresh) {
  return element(
    'header',
    { className: 'panel-header' },
    element('h2', {}, text),
    onRefresh && element('button', { type: 'button', className: 'icon-button', 'aria-label': `Refresh ${text.toLowerCase()}`, title: 'Refresh', onclick: onRefresh }, icon('refresh')),
  );
}

function failure(error) {
  return element('p', { className: 'panel-error', role: 'alert' }, error.message);
}

/** A panel's data from `request`; on failure the panel shows the error under its heading, and undefined is answered. */
async function load(aside, title, request, retry) {
  try {
    return await request();
  } catch (error) {
    replaceContent(aside, heading(title, retry), failure(error));
    return undefined;
  }
}

/** The tools the agent has (`/agents/tools`), built-in and user-written, and user tools that failed to load. */
export class ToolsPanel {
  constructor(aside) {
    this.aside = aside;
  }

  async refresh() {
    const answer = await load(this.aside, 'Tools', () => api.tools(), () => this.refresh());
    if (!answer) return;
    const { tools, errors = [] } = answer;
    const group = (source, title) => {
      const members = tools.filter((tool) => tool.source === source);
      return element(
        'section',
        {},
        element('h3', {}, `${title} (${members.length})`),
        element(
          'ul',
          { className: 'tool-list' },
          members.map((tool) =>
            element('li', { dataset: { toolName: tool.name, source: tool.source } }, element('code', {}, tool.name), element('p', { className: 'muted' }, tool.description)),
          ),
        ),
      );
    };
    replaceContent(
      this.aside,
      heading('Tools', () => this.refresh()),
      errors.length > 0 &&
        element(
          'section',
          { className: 'tool-errors' },
          element('h3', {}, 'Failed to load'),
          element(
            'ul',
            {},
            errors.map((error) => element('li', { dataset: { toolError: error.file } }, element('code', {}, error.file), element('p', {}, error.message))),
          ),
        ),
      group('user', 'Written by Hearth'),
      group('builtin', 'Built in'),
    );
  }
}

/** Long-term memory (`/memory`): the narrative summary and the facts, each editable and deletable. */
export class MemoryPanel {
  #editing;

  constructor(aside) {
    this.aside = aside;
  }

  async refresh() {
    const memory = await load(this.aside, 'Memory', () => api.memory(), () => this.refresh());
    if (!memory) return;
    const byCategory = Map.groupBy(memory.facts, (fact) => fact.category);
    replaceContent(
      this.aside,
      heading('Memory', () => this.refresh()),
      element('p', { className: 'memory-summary' }, memory.summary || 'Nothing remembered yet. Hearth writes down what it learns about you after a conversation has been idle for a while.'),
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

/** What the model currently sees of the open session: its size and the summaries that replaced older turns. */
export class ContextPanel {
  constructor(aside) {
    this.aside = aside;
  }

  async refresh(sessionId) {
    if (!sessionId) {
      replaceContent(this.aside, heading('Context'), element('p', { className: 'muted' }, 'Open a session to see its context.'));
      return;
    }
    const context = await load(this.aside, 'Context', () => api.context(sessionId), () => this.refresh(sessionId));
    if (!context) return;
    const summaries = context.messages.filter((message) => message.is_summary);
    const share = context.max_context_tokens > 0 ? Math.round((100 * context.context_tokens) / context.max_context_tokens) : 0;
    replaceContent(
      this.aside,
      heading('Context', () => this.refresh(sessionId)),
      element('p', {}, `${context.context_tokens.toLocaleString()} of ${context.max_context_tokens.toLocaleString()} tokens (${share}%) in ${context.messages.length} messages.`),
      summaries.length === 0
        ? element('p', { className: 'muted' }, 'Nothing has been summarised yet: the model sees the whole conversation.')
        : summaries.map((message) => summaryItem(message.content)),
    );
  }
}
