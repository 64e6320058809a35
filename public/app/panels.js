import { api } from './api.js';
import { element, replaceContent } from './dom.js';
import { icon } from './icons.js';
import { mcpServersSection } from './mcp-servers-section.js';
import { summaryItem } from './transcript-items.js';

/** A panel's heading, with a refresh button when `onRefresh` is given. */
export function heading(text, onRefresh) {
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
export async function load(aside, title, request, retry) {
  try {
    return await request();
  } catch (error) {
    replaceContent(aside, heading(title, retry), failure(error));
    return undefined;
  }
}

const statusText = { loaded: 'loaded', disabled: 'switched off', failed: 'failed to load' };

const toolsRefreshDelayMs = 100;

/**
 * The tools the agent has (`/agents/tools`): the open session's profile's tools first, then each
 * MCP server with its state and tools, then the rest, which that profile cannot use. User tools
 * show their file, status and error; user and MCP tools have a switch that turns them on or off
 * for every profile.
 */
export class ToolsPanel {
  #reads = 0;
  #refreshTimer;

  /** `profileId()` names the profile of the open session (or of the next new one). */
  constructor(aside, { profileId = () => '' } = {}) {
    this.aside = aside;
    this.profileId = profileId;
  }

  /** Reads the tools again shortly: several changes at once (an MCP server connecting, its tools arriving) cost one read. */
  refreshSoon() {
    clearTimeout(this.#refreshTimer);
    this.#refreshTimer = setTimeout(() => this.refresh(), toolsRefreshDelayMs);
  }

  async refresh() {
    // Only the latest read is drawn: an older answer that arrives late must not cover a newer one.
    const read = ++this.#reads;
    const answer = await load(this.aside, 'Tools', () => Promise.all([api.tools(), api.profiles()]), () => this.refresh());
    if (!answer || read !== this.#reads) return;
    const [{ tools, errors = [], servers = [], prompt_budget: promptBudget }, { profiles }] = answer;
    const profile = profiles.find((candidate) => candidate.id === this.profileId());
    const inProfile = profile ? profile.enabled_tools : [];
    const listed = tools.filter((tool) => tool.source !== 'mcp');
    const chosen = inProfile.flatMap((name) => listed.filter((tool) => tool.name === name && tool.status !== 'failed'));
    const rest = listed.filter((tool) => !chosen.includes(tool)).sort((first, second) => sourceRank(first) - sourceRank(second));
    const entryFiles = new Set(tools.map((tool) => tool.file).filter(Boolean));
    // Errors naming an MCP server are shown in that server's section.
    const otherErrors = errors.filter((error) => error.server === undefined && !entryFiles.has(error.file));
    replaceContent(
      this.aside,
      heading('Tools', () => this.refresh()),
      otherErrors.length > 0 &&
        element(
          'section',
          { className: 'tool-errors' },
          element('h3', {}, 'Failed to load'),
          element(
            'ul',
            {},
            otherErrors.map((error) => element('li', { dataset: { toolError: error.file } }, element('code', {}, error.file), element('p', {}, error.message))),
          ),
        ),
      promptBudgetWarning(profile, promptBudget),
      profile &&
        element(
          'section',
          { dataset: { toolGroup: 'in-profile' } },
          element('h3', {}, `In ${profile.name} (${chosen.length})`),
          element('ul', { className: 'tool-list' }, chosen.map((tool) => this.#tool(tool, true))),
        ),
      mcpServersSection({
        servers,
        tools: tools.filter((tool) => tool.source === 'mcp'),
        errors,
        profile,
        inProfile: (tool) => inProfile.includes(tool.name),
        toolSwitch: (tool) => this.#switch(tool, 'On: offered to every profile that does not set mcp_tools: false. Off: offered to none.'),
        serverSwitch: (server, serverTools) => this.#serverSwitch(server, serverTools),
      }),
      element(
        'section',
        { dataset: { toolGroup: profile ? 'not-in-profile' : 'all' } },
        element('h3', {}, profile ? `Not available in ${profile.name} (${rest.length})` : `All tools (${rest.length})`),
        element('ul', { className: 'tool-list' }, rest.map((tool) => this.#tool(tool, profile ? false : undefined))),
      ),
      element(
        'p',
        { className: 'muted tool-hint' },
        'Drop a tool file into user-tools/ and every profile can use it, unless the profile sets user_tools: false. Switch an MCP server’s tools on here and every profile can use them, unless it sets mcp_tools: false. Switch a tool off here to take it away from every profile.',
      ),
    );
  }

  #tool(tool, inProfile) {
    const user = tool.source === 'user';
    return element(
      'li',
      {
        dataset: { toolName: tool.name, source: tool.source, ...(inProfile !== undefined && { inProfile: String(inProfile) }), ...(user && { status: tool.status }) },
      },
      element('div', { className: 'tool-title' }, element('code', {}, tool.name), user && this.#switch(tool, 'On for every profile that takes user tools')),
      tool.description && element('p', { className: 'muted' }, tool.description),
      user && element('div', { className: 'tool-meta' }, element('code', {}, tool.file), ` · ${statusText[tool.status] ?? tool.status}`),
      user && tool.error && element('p', { className: 'tool-error', role: 'note' }, tool.error),
      inProfile === false && element('div', { className: 'tool-meta' }, 'Not available in this profile'),
    );
  }

  /** All of one MCP server's tools on or off at once; on while every one of them is. */
  #serverSwitch(server, serverTools) {
    const input = element('input', {
      type: 'checkbox',
      role: 'switch',
      'aria-label': `Use all tools of ${server.name}`,
      checked: serverTools.every((tool) => tool.enabled),
    });
    input.addEventListener('change', async () => {
      input.disabled = true;
      try {
        for (const tool of serverTools) if (tool.enabled !== input.checked) await api.setToolEnabled(tool.name, input.checked);
      } catch (error) {
        input.closest('section')?.append(failure(error));
      }
      await this.refresh();
    });
    return element('label', { className: 'tool-switch', title: 'All of its tools, for every profile that does not set mcp_tools: false' }, input, element('span', {}, 'All on'));
  }

  #switch(tool, title) {
    const input = element('input', { type: 'checkbox', role: 'switch', 'aria-label': `Use ${tool.name}`, checked: tool.enabled });
    input.addEventListener('change', async () => {
      input.disabled = true;
      try {
        await api.setToolEnabled(tool.name, input.checked);
      } catch (error) {
        input.checked = !input.checked;
        input.disabled = false;
        input.closest('li')?.append(failure(error));
        return;
      }
      await this.refresh();
    });
    return element('label', { className: 'tool-switch', title }, input, element('span', {}, 'On'));
  }
}

/** Said when the open session's profile sends more than the budget before any message (system prompt and tool schemas). */
function promptBudgetWarning(profile, budget) {
  if (!profile || budget === undefined || profile.prompt_characters === undefined || profile.prompt_characters <= budget) return false;
  return element(
    'p',
    { className: 'tool-budget-warning', role: 'note', dataset: { role: 'prompt-budget-warning' } },
    `${profile.name} sends ${profile.prompt_characters.toLocaleString('en')} characters of instructions and tool descriptions with every turn, past the budget of ${budget.toLocaleString('en')}: `,
    'answers get slower and small models lose track. Switch off the tools it does not need.',
  );
}

/** Outside the profile: user tools first (they can be switched), then the built-ins. */
function sourceRank(tool) {
  return tool.source === 'user' ? 0 : 1;
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
