import type { FastifyInstance } from 'fastify';
import type { Agent } from '../agent/agent.ts';
import type { BackendChoice } from '../llm/backend-registry.ts';

export async function agentRoutes(app: FastifyInstance, options: { agent: Agent }) {
  const { profiles, tools, backends, userTools } = options.agent.deps;

  app.get('/agents/profiles', async () => ({
    profiles: profiles.list().map((profile) => ({
      id: profile.id,
      name: profile.name,
      description: profile.description,
      examples: profile.examples,
      ...modelOf(backends.choose({ ...(profile.backend && { backend: profile.backend }), ...(profile.model && { model: profile.model }) })),
      temperature: profile.temperature,
      planning_enabled: profile.planning_enabled,
      enabled_tools: profile.tools.filter((name) => tools.get(name)),
    })),
    errors: profiles.errors(),
  }));

  app.get('/agents/tools', async () => ({ tools: tools.summaries(), errors: userTools.errors() }));
}

function modelOf(choice: BackendChoice): { model: string | null; backend: string | null } {
  return choice.ok ? { model: choice.model, backend: choice.backend.id } : { model: null, backend: null };
}
