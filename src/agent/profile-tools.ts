import type { Profile } from '../profiles/profile.ts';
import { buildSystemPrompt } from './system-prompt.ts';
import type { Tool } from '../tools/tool.ts';
import type { ToolRegistry } from '../tools/tool-registry.ts';

/**
 * The tools a session of `profile` has: the ones the profile names, plus every user tool that
 * is switched on, unless the profile sets `user_tools: false`, and every MCP tool switched on
 * in the Tools panel, unless it sets `mcp_tools: false`.
 */
export function profileTools(profile: Pick<Profile, 'tools' | 'user_tools' | 'mcp_tools'>, tools: ToolRegistry): Tool[] {
  return tools.forNames(profile.tools, { userTools: profile.user_tools, mcpTools: profile.mcp_tools });
}

/** The characters a tool's schema adds to every call, as the backends send it. */
export function toolPromptCharacters(tool: Pick<Tool, 'name' | 'description' | 'parameters'>): number {
  return JSON.stringify({ type: 'function', function: { name: tool.name, description: tool.description, parameters: tool.parameters } }).length;
}

/** What every call of the profile carries before any message: its system prompt and its tools' schemas (budget: 12,000). */
export function promptCharacters(profile: Profile, persona: string, tools: ToolRegistry): number {
  return buildSystemPrompt(persona, profile).length + profileTools(profile, tools).reduce((total, tool) => total + toolPromptCharacters(tool), 0);
}
