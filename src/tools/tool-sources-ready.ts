import type { McpServers } from './mcp/mcp-servers.ts';
import type { ToolRegistry } from './tool-registry.ts';
import type { UserToolManager } from './user-tools/user-tool-manager.ts';

/** How long a turn waits for the MCP servers named at start to connect or fail. */
const mcpWaitMs = 5_000;
/**
 * Past the user tools' load timeout: a module that loops at import is given up at the timeout,
 * then the host starts again without it, and the tools that loaded arrive a moment later.
 */
const userToolGraceMs = 3_000;

/**
 * Right after a start the user tools are still loading and the MCP servers connecting; a turn
 * (or a catch-up scheduled run) that began then would find their tools missing. This gives the
 * registry a wait for each, so `registry.ready()` waits for both, each on its own and bounded:
 * the user tools for their load timeout and a little more, MCP for a few seconds. Once both
 * have settled it returns at once.
 */
export function waitForToolSources(
  registry: ToolRegistry,
  sources: { userTools: Pick<UserToolManager, 'whenLoaded' | 'loadTimeoutMs'>; mcp: Pick<McpServers, 'ready'> },
): void {
  const { userTools, mcp } = sources;
  registry.addReadiness(() => withinLimit(userTools.whenLoaded(), userTools.loadTimeoutMs + userToolGraceMs));
  registry.addReadiness(() => mcp.ready(mcpWaitMs));
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
