import { Type } from '@sinclair/typebox';
import type { Tool } from '../tool.ts';
import type { ToolRegistry } from '../tool-registry.ts';

export function createListToolsTool(registry: ToolRegistry): Tool<Record<string, never>> {
  return {
    name: 'list_tools',
    description: 'List every tool now available (built-in, user-written, MCP) with its source.',
    parameters: Type.Object({}, { additionalProperties: false }),
    async execute() {
      const tools = registry.summaries();
      const lines = tools.map((tool) => `- ${tool.name} (${tool.server ? `mcp server ${tool.server}` : tool.source}): ${tool.description}`);
      return `${tools.length} tools:\n${lines.join('\n')}\nRead a tool's manual with tool_manual.`;
    },
  };
}
