import type { FastifyInstance } from 'fastify';
import type { BackendStatusMonitor } from '../llm/backend-status.ts';

/** `GET /status`: which backend and model Hearth talks to and whether they answered the last check. */
export async function statusRoutes(app: FastifyInstance, options: { backendStatus: BackendStatusMonitor }) {
  app.get('/status', async () => ({ backend: options.backendStatus.current() }));
}
