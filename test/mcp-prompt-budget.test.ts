// Issue 18: what an MCP server's tools cost every call, against the §12 prompt budget
// (docs/architecture.md, Budgets), with the real server-everything and the shipped profiles.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultPersona } from '../src/agent/persona.ts';
import { buildSystemPrompt } from '../src/agent/system-prompt.ts';
import { parseConfig } from '../src/config.ts';
import { IntegrationRegistry } from '../src/integrations/integration-registry.ts';
import type { Profile } from '../src/profiles/profile.ts';
import { ProfileRegistry } from '../src/profiles/profile-registry.ts';
import { openDatabase } from '../src/store/database.ts';
import { createToolRegistry } from '../src/tools/builtin/index.ts';
import { McpServers } from '../src/tools/mcp/mcp-servers.ts';
import type { ToolRegistry } from '../src/tools/tool-registry.ts';
import { everythingStdio, writeMcpConfig } from './support/mcp-servers.ts';
import { waitUntil } from './support/wait-until.ts';
import { withJail } from './support/jail.ts';

const promptBudget = 12_000;

/** What one call carries for a profile: its system prompt and the schema of every tool it offers. */
function promptSize(tools: ToolRegistry, profile: Profile): number {
  const schemas = tools
    .forNames(profile.tools, { userTools: profile.user_tools })
    .map(({ name, description, parameters }) => JSON.stringify({ type: 'function', function: { name, description, parameters } }));
  return buildSystemPrompt(defaultPersona, profile).length + schemas.join('').length;
}

describe("server-everything's tools in a profile's prompt", () => {
  let folder: string;
  let tools: ToolRegistry;
  let servers: McpServers;
  let profiles: ProfileRegistry;

  beforeAll(async () => {
    folder = await mkdtemp(path.join(tmpdir(), 'hearth-mcp-budget-'));
    profiles = await ProfileRegistry.open('profiles');
    tools = createToolRegistry({ db: await openDatabase(':memory:'), ...withJail(parseConfig({})), profiles, runSubagent: async () => 'not run here' });
    await writeMcpConfig(path.join(folder, 'mcp.json'), { everything: everythingStdio() });
    servers = new McpServers({
      configFile: path.join(folder, 'mcp.json'),
      dataDir: folder,
      registry: tools,
      integrations: new IntegrationRegistry(),
      logger: pino({ level: 'silent' }),
      toolTimeoutMs: 60_000,
      watch: false,
    });
    await servers.start();
    await waitUntil(() => servers.servers()[0]?.status === 'connected', 15_000);
  });

  afterAll(async () => {
    await servers.close();
    await rm(folder, { recursive: true, force: true });
  });

  it('each tool costs little: a two-sentence description naming the server and its schema', () => {
    const everything = tools.forNames(['mcp:everything'], { userTools: false });
    expect(everything.length).toBeGreaterThanOrEqual(10);
    for (const tool of everything) {
      expect(tool.description).toMatch(/\(MCP server everything\)$/);
      expect(JSON.stringify({ name: tool.name, description: tool.description, parameters: tool.parameters }).length).toBeLessThan(1_000);
    }
  });

  it('a profile built around the server stays under the budget; added whole to a shipped profile, it costs under 5,000 characters, which the budget does not hold', () => {
    const secretary = profiles.get('secretary')!;
    const focused: Profile = { ...secretary, id: 'everything_user', tools: ['scratchpad', 'todo', 'mcp:everything'] };
    expect(promptSize(tools, focused)).toBeLessThan(promptBudget);

    const costs = profiles.list().map((profile) => {
      const without = promptSize(tools, profile);
      const withServer = promptSize(tools, { ...profile, tools: [...profile.tools, 'mcp:everything'] });
      return { profile: profile.id, without, withServer, cost: withServer - without };
    });
    // The same tools cost the same in every profile (docs/integrations.md, "MCP servers", "Prompt size").
    expect(new Set(costs.map(({ cost }) => cost)).size).toBe(1);
    expect(costs[0]!.cost).toBeGreaterThan(2_000);
    expect(costs[0]!.cost).toBeLessThan(5_000);
    for (const { without, withServer } of costs) {
      expect(without).toBeLessThan(promptBudget);
      expect(withServer).toBeGreaterThan(promptBudget); // why the shipped profiles name no MCP server
    }
  });
});
