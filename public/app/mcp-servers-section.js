import { element, withInlineCode } from './dom.js';

const transportWords = { stdio: 'stdio', http: 'Streamable HTTP' };

const counted = (count, one, many) => `${count} ${count === 1 ? one : many}`;

/** A server's state in a few words: connecting…, connected with N tools, failed, or an entry that was not loaded. */
function stateText(server) {
  if (server.status === 'connected') return `connected · ${counted(server.tools.length, 'tool', 'tools')}`;
  if (server.status === 'connecting') return 'connecting…';
  if (server.status === 'invalid') return 'not loaded';
  return server.status;
}

/** Why a server shows no tools, when it shows none. */
function emptyText(server) {
  if (server.status === 'connected') return 'It offers no tools.';
  if (server.status === 'connecting') return 'Its tools appear once it has connected.';
  if (server.status === 'failed') return 'Hearth keeps trying to connect it; its tools appear once it answers.';
  return 'Fix its entry in the file and save: Hearth reads it again by itself.';
}

/** The description the model sees, without the "(MCP server <name>)" it ends with: the section already names the server. */
function describe(tool) {
  const suffix = ` (MCP server ${tool.server})`;
  return tool.description.endsWith(suffix) ? tool.description.slice(0, -suffix.length) : tool.description;
}

/** A tool's name, which may break after its server's `__` on a narrow panel. */
const breakableName = (name) => name.split(/(?<=__)/).flatMap((part, index) => (index === 0 ? [part] : [element('wbr'), part]));

const characters = (count) => `${count.toLocaleString('en')} characters`;

/**
 * The MCP servers of `/agents/tools` (docs/integrations.md, "MCP servers"), one section each with its state, its
 * message and its tools, every tool with the switch `toolSwitch(tool)` gives, what it adds to
 * every call's prompt, and a switch for all of a server's tools at once (`serverSwitch(server, tools)`). Errors naming a
 * server that is not listed (an entry of the file that could not be read) get a section of their
 * own, so each server in the file shows up. False when no server is configured.
 *
 * `inProfile(tool)` says whether the open session's profile has the tool; `profile` is that profile, if any.
 */
export function mcpServersSection({ servers = [], tools, errors, profile, inProfile, toolSwitch, serverSwitch }) {
  const listed = new Set(servers.map((server) => server.name));
  const unlisted = Map.groupBy(
    errors.filter((error) => error.server !== undefined && !listed.has(error.server)),
    (error) => error.server,
  );
  const shown = [
    ...servers,
    ...[...unlisted].map(([name, serverErrors]) => ({ name, status: 'invalid', message: serverErrors.map((error) => error.message).join('\n'), tools: [] })),
  ];
  if (shown.length === 0) return false;
  const byName = new Map(tools.map((tool) => [tool.name, tool]));
  return element(
    'section',
    { dataset: { toolGroup: 'mcp' } },
    element('h3', {}, `MCP servers (${shown.length})`),
    shown.map((server) => {
      const serverTools = server.tools.map((name) => byName.get(name)).filter(Boolean);
      const notes = errors.filter((error) => error.server === server.name && listed.has(server.name) && error.message !== server.message);
      return serverSection(server, serverTools, notes, { profile, inProfile, toolSwitch, serverSwitch });
    }),
  );
}

function serverSection(server, tools, notes, { profile, inProfile, toolSwitch, serverSwitch }) {
  const available = profile ? tools.filter((tool) => inProfile(tool)).length : 0;
  const cost = tools.reduce((total, tool) => total + (tool.prompt_characters ?? 0), 0);
  const meta = [
    transportWords[server.transport] && `Over ${transportWords[server.transport]}`,
    server.unjailed && 'unjailed: runs as Hearth’s user, outside any jail',
    profile && tools.length > 0 && `${profile.name} uses ${available === 0 ? 'none' : available === tools.length ? 'all' : available} of them`,
    tools.length > 0 && `all of them add ${characters(cost)} per turn`,
  ].filter(Boolean);
  return element(
    'section',
    { className: 'mcp-server', dataset: { mcpServer: server.name, status: server.status }, 'aria-label': `MCP server ${server.name}` },
    element(
      'div',
      { className: 'mcp-server-title' },
      element('h4', { className: 'mcp-server-name' }, server.name),
      element('span', { className: 'mcp-server-state', dataset: { status: server.status } }, stateText(server)),
      tools.length > 0 && serverSwitch(server, tools),
    ),
    meta.length > 0 && element('div', { className: 'tool-meta' }, meta.join(' · ')),
    server.message && element('p', { className: 'mcp-server-message', role: server.status === 'connecting' ? undefined : 'note' }, withInlineCode(server.message)),
    notes.map((note) => element('p', { className: 'mcp-server-message mcp-server-note', role: 'note' }, withInlineCode(note.message))),
    tools.length === 0
      ? element('p', { className: 'muted mcp-server-empty' }, emptyText(server))
      : element(
          'ul',
          { className: 'tool-list' },
          tools.map((tool) => {
            const available = profile ? inProfile(tool) : undefined;
            return element(
              'li',
              { dataset: { toolName: tool.name, source: 'mcp', server: server.name, enabled: String(tool.enabled), ...(available !== undefined && { inProfile: String(available) }) } },
              element('div', { className: 'tool-title' }, element('code', {}, breakableName(tool.name)), toolSwitch(tool)),
              tool.description && element('p', { className: 'muted' }, describe(tool)),
              tool.prompt_characters !== undefined &&
                element('div', { className: 'tool-meta', dataset: { role: 'prompt-cost' } }, `Adds ${characters(tool.prompt_characters)} to every turn that offers it`),
            );
          }),
        ),
  );
}
