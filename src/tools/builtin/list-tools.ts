import { Type } from '@sinclair/typebox';
import type { Tool } from '../tool.ts';
import type { ToolRegistry } from '../tool-registry.ts';

export function createListToolsTool(registry: ToolRegistry): Tool<Record<string, never>> {
  return {
    name: 'list_tools',
    description: 'List every tool the server has now, built-in and user-written, with its source.',
    parameters: Type.Object({}, { additionalProperties: false }),
    source: 'builtin',
    async execute() {
      const tools = registry.list();
      const lines = tools.map((tool) => `- ${tool.name} (${tool.source}): ${tool.description}`);
      return `${tools.length} tools:\n${lines.join('\n')}\nRead a tool's manual with tool_manual.`;
    },
  };
}
