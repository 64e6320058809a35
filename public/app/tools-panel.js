import { api } from './api.js';
import { debounce } from './debounce.js';
import { element, replaceContent } from './dom.js';
import { mcpServersSection } from './mcp-servers-section.js';
import { failure, heading, load } from './panel-frame.js';

const statusText = { loaded: 'loaded', disabled: 'switched off', failed: 'failed to load' };

const toolsRefreshDelayMs = 100;

/**
 * The tools the agent has (`/agents/tools`): the open session's profile's tools first, then each
 * MCP server with its state and tools, then the rest, which that profile cannot use. User tools
 * show their file, status and error; user and MCP tools have a switch that turns them on or off
 * for every profile.
 */
export class ToolsPanel {
  name = 'Tools';
  #reads = 0;
  /** Reads the tools again shortly: several changes at once (an MCP server connecting, its tools arriving) cost one read. */
  #refreshSoon = debounce(() => this.refresh(), toolsRefreshDelayMs);

  /** `profileId()` names the profile of the open session (or of the next new one). */
  constructor(aside, { profileId = () => '' } = {}) {
    this.aside = aside;
    this.profileId = profileId;
  }

  onEvent(event) {
    if (event.type === 'tools_changed' || event.type === 'profile_changed') this.refresh();
    // An MCP server's state is shown here too (its tools follow with tools_changed).
    else if (event.type === 'integration_status' && event.integration.name.startsWith('mcp:')) this.#refreshSoon();
  }

  async refresh() {
    // Only the latest read is drawn: an older answer that arrives late must not cover a newer one.
    const read = ++this.#reads;
    const answer = await load(this.aside, this.name, () => Promise.all([api.tools(), api.profiles()]), () => this.refresh());
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
      heading(this.name, () => this.refresh()),
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
    const on = serverTools.filter((tool) => tool.enabled).length;
    const state = element('span', { className: 'switch-state' }, on === serverTools.length ? 'All on' : on === 0 ? 'All off' : `${on} of ${serverTools.length} on`);
    input.addEventListener('change', async () => {
      state.textContent = input.checked ? 'All on' : 'All off';
      input.disabled = true;
      try {
        for (const tool of serverTools) if (tool.enabled !== input.checked) await api.setToolEnabled(tool.name, input.checked);
      } catch (error) {
        input.closest('section')?.append(failure(error));
      }
      await this.refresh();
    });
    return element('label', { className: 'tool-switch', title: 'All of its tools, for every profile that does not set mcp_tools: false' }, input, state);
  }

  #switch(tool, title) {
    const input = element('input', { type: 'checkbox', role: 'switch', 'aria-label': `Use ${tool.name}`, checked: tool.enabled });
    // The label says the switch's state, and follows it at once (the panel is drawn again once the server took it).
    const state = element('span', { className: 'switch-state' });
    const showState = () => (state.textContent = input.checked ? 'On' : 'Off');
    showState();
    input.addEventListener('change', async () => {
      showState();
      input.disabled = true;
      try {
        await api.setToolEnabled(tool.name, input.checked);
      } catch (error) {
        input.checked = !input.checked;
        showState();
        input.disabled = false;
        input.closest('li')?.append(failure(error));
        return;
      }
      await this.refresh();
    });
    return element('label', { className: 'tool-switch', title }, input, state);
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

