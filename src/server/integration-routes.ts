import type { FastifyInstance } from 'fastify';
import type { IntegrationRegistry } from '../integrations/integration-registry.ts';

/** `GET /integrations`: each integration's status, its message when it is not connected, and what it holds. */
export async function integrationRoutes(app: FastifyInstance, options: { integrations: IntegrationRegistry }) {
  app.get('/integrations', async () => ({ integrations: options.integrations.list() }));
}
