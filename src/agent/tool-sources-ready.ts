import type { AgentDependencies } from './dependencies.ts';

/** How long a turn waits for the MCP servers named at start to connect or fail. */
const mcpWaitMs = 5_000;

/**
 * Right after a start the user tools are still loading and the MCP servers connecting; a turn
 * (or a catch-up scheduled run) that began then would find their tools missing. It waits for
 * both, each on its own and bounded: the user tools for their load timeout, MCP for a few
 * seconds. Once both have settled this returns at once.
 */
export async function toolSourcesReady(deps: Pick<AgentDependencies, 'userTools' | 'mcp'>): Promise<void> {
  await Promise.all([withinLimit(deps.userTools.whenLoaded(), deps.userTools.loadTimeoutMs), deps.mcp.ready(mcpWaitMs)]);
}

async function withinLimit(work: Promise<unknown>, limitMs: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const limit = new Promise<void>((resolve) => (timer = setTimeout(resolve, limitMs)));
  try {
    // A load that fails leaves the built-in tools; the turn goes on with them.
    await Promise.race([work.catch(() => undefined), limit]);
  } finally {
    clearTimeout(timer);
  }
}
