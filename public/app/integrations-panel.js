import { api } from './api.js';
import { element, replaceContent, withInlineCode } from './dom.js';
import { heading, load } from './panel-frame.js';

const labels = { home_assistant: 'Home Assistant', mqtt: 'MQTT', telegram: 'Telegram' };
const stateWords = { connected: 'connected', connecting: 'connecting…', failed: 'failed', not_configured: 'not configured' };

const counted = (count, one, many) => `${count} ${count === 1 ? one : many}`;
const mcpPrefix = 'mcp:';
const transportWords = { stdio: 'stdio', http: 'Streamable HTTP' };

/** What an integration holds, in words: Home Assistant's entities and areas, MQTT's broker, Telegram's bot, an MCP server's tools, otherwise each detail as it comes. */
function describeDetails(name, status, details = {}) {
  if (name === 'home_assistant' && typeof details.entities === 'number') {
    const entities = counted(details.entities, 'entity', 'entities');
    return typeof details.areas === 'number' ? `${entities} in ${counted(details.areas, 'area', 'areas')}` : entities;
  }
  if (name === 'mqtt' && (details.broker || details.url)) return withInlineCode(`Broker \`${details.broker ?? details.url}\``);
  if (name === 'telegram') {
    if (status === 'connected' && details.bot) return `Bot ${details.bot}`;
    const retryAt = details.retry_at ? new Date(details.retry_at) : undefined;
    if (status === 'failed' && retryAt && !Number.isNaN(retryAt.getTime())) return `Trying again at ${retryAt.toLocaleTimeString()}`;
    return '';
  }
  if (name.startsWith(mcpPrefix)) {
    const transport = transportWords[details.transport];
    const tools = status === 'connected' && typeof details.tools === 'number' ? ` with ${counted(details.tools, 'tool', 'tools')}` : '';
    return `MCP server${transport ? ` over ${transport}` : ''}${tools}`;
  }
  const parts = Object.entries(details).flatMap(([key, value]) => {
    if (typeof value === 'number') return [`${value} ${key.replaceAll('_', ' ')}`];
    if (typeof value === 'string' && value !== '') return [`${key.replaceAll('_', ' ')}: ${value}`];
    return [];
  });
  return parts.join(' · ');
}

/**
 * The connections Hearth keeps to things outside it (`GET /integrations`): Home Assistant, the MQTT
 * broker, MCP servers. While open it follows the connections live from `integration_status` events;
 * those that arrive while the list loads are applied over it. An integration announced as `removed`
 * (an MCP server taken out of mcp.json) leaves the list.
 */
export class IntegrationsPanel {
  name = 'Integrations';
  #statuses = new Map();
  #arrivedWhileLoading;
  #shown = false;

  constructor(aside) {
    this.aside = aside;
  }

  async refresh() {
    this.#arrivedWhileLoading = new Map();
    const answer = await load(this.aside, this.name, () => api.integrations(), () => this.refresh());
    const arrived = this.#arrivedWhileLoading;
    this.#arrivedWhileLoading = undefined;
    if (!answer) return;
    this.#statuses = new Map(answer.integrations.map((status) => [status.name, status]));
    for (const [name, status] of arrived) {
      if (status.status === 'removed') this.#statuses.delete(name);
      else this.#statuses.set(name, status);
    }
    this.#shown = true;
    this.#render();
  }

  onEvent(event) {
    if (event.type === 'integration_status') this.#update(event.integration);
    else if (event.type === 'reconnected') this.refresh();
  }

  #update({ name, status, message, details }) {
    const integration = { name, status, message, details: details ?? {} };
    this.#arrivedWhileLoading?.set(name, integration);
    if (status === 'removed') this.#statuses.delete(name);
    else this.#statuses.set(name, integration);
    if (this.#shown) this.#render();
  }

  #render() {
    const integrations = [...this.#statuses.values()].sort((first, second) => first.name.localeCompare(second.name));
    replaceContent(
      this.aside,
      heading(this.name, () => this.refresh()),
      integrations.length === 0
        ? element(
            'p',
            { className: 'muted integrations-empty' },
            withInlineCode(
              'No integrations are configured. To connect Home Assistant (`HA_URL`, `HA_TOKEN`), an MQTT broker (`MQTT_URL`) or MCP servers (`mcp.json`), see docs/integrations.md (Home Assistant, MQTT, MCP servers).',
            ),
          )
        : element('ul', { className: 'integration-list' }, integrations.map((integration) => this.#row(integration))),
    );
  }

  #row({ name, status, message, details }) {
    const detailText = describeDetails(name, status, details);
    return element(
      'li',
      { dataset: { integration: name, status } },
      element(
        'div',
        { className: 'integration-title' },
        element('span', { className: 'integration-name' }, labels[name] ?? name),
        element('span', { className: 'integration-state', dataset: { status } }, stateWords[status] ?? status),
      ),
      detailText.length > 0 && element('p', { className: 'integration-details' }, detailText),
      message && element('p', { className: 'integration-message', role: status === 'failed' ? 'note' : undefined }, withInlineCode(message)),
    );
  }
}
