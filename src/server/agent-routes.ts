import { Type, type Static } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { toolPromptCharacters } from '../agent/profile-tools.ts';
import { ApiError } from '../errors.ts';
import type { AgentDependencies } from '../agent/dependencies.ts';
import type { McpServers } from '../tools/mcp/mcp-servers.ts';
import type { ToolSwitches } from '../tools/user-tools/tool-switches.ts';
import type { UserToolManager } from '../tools/user-tools/user-tool-manager.ts';
import { managesHousehold } from '../people/rights.ts';
import { profileEntry } from './profile-entry.ts';
import { toolEntries, toolErrors } from './tool-entries.ts';

/** What a profile's system prompt and tool schemas should stay under per call (docs/architecture.md, Budgets). */
const promptBudgetCharacters = 12_000;
const ToolParams = Type.Object({ name: Type.String({ minLength: 1, maxLength: 200 }) });
const SwitchBody = Type.Object({ enabled: Type.Boolean() }, { additionalProperties: false });

export type AgentRouteOptions = Pick<AgentDependencies, 'profiles' | 'tools' | 'backends' | 'persona'> & {
  userTools: UserToolManager;
  toolSwitches: ToolSwitches;
  mcp: McpServers;
};

export async function agentRoutes(app: FastifyInstance, options: AgentRouteOptions) {
  const { profiles, tools, backends, userTools, toolSwitches, mcp, persona } = options;
  const sources = { registry: tools, userTools, switches: toolSwitches, mcp };

  app.get('/agents/profiles', async (request) => ({
    profiles: profiles.list().map((profile) => profileEntry(profile, request, { tools, backends, persona })),
    errors: profiles.errors(),
  }));

  app.get('/agents/tools', async () => ({
    tools: toolEntries(sources).map((entry) => ({ ...entry, prompt_characters: toolPromptCharacters(entry) })),
    errors: toolErrors(sources),
    servers: mcp.servers(),
    prompt_budget: promptBudgetCharacters,
  }));

  // Built-ins are chosen by the profiles; user and MCP tools are switched on or off for every profile at once.
  app.put<{ Params: Static<typeof ToolParams>; Body: Static<typeof SwitchBody> }>(
    '/agents/tools/:name/enabled',
    { schema: { params: ToolParams, body: SwitchBody } },
    async (request) => {
      const { name } = request.params;
      if (!managesHousehold(request.caller.person)) throw new ApiError('forbidden', 'Only the owner switches tools on or off: they are the whole household\'s.');
      if (tools.isBuiltin(name)) {
        throw new ApiError('invalid_request', `${name} is a built-in tool: a profile's "tools" list decides which profiles have it.`);
      }
      const known = () => toolEntries(sources).find((entry) => entry.source !== 'builtin' && entry.name === name);
      const entry = known();
      if (!entry) throw new ApiError('not_found', `There is no user or MCP tool named ${name}.`);
      const outcome = await toolSwitches.set(name, request.body.enabled, { everywhere: entry.source === 'mcp' });
      if (!outcome.ok) throw new ApiError('tools_file_malformed', outcome.message);
      return known();
    },
  );
}
