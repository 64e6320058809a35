import type { FastifyInstance } from 'fastify';
import type { Agent } from '../agent/agent.ts';

export async function agentRoutes(app: FastifyInstance, options: { agent: Agent }) {
  const { profiles, tools, config } = options.agent.deps;

  app.get('/agents/profiles', async () => ({
    profiles: profiles.list().map((profile) => ({
      id: profile.id,
      name: profile.name,
      description: profile.description,
      model: profile.model ?? null,
      backend: profile.backend ?? config.LLM_BACKEND,
      temperature: profile.temperature,
      planning_enabled: profile.planning_enabled,
      enabled_tools: profile.tools.filter((name) => tools.get(name)),
    })),
    errors: profiles.errors(),
  }));

  app.get('/agents/tools', async () => ({ tools: tools.summaries(), errors: [] }));
}
