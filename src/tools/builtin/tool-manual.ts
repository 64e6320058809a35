import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { Type, type Static } from '@sinclair/typebox';
import type { JsonSchema, Tool } from '../tool.ts';
import type { ToolRegistry } from '../tool-registry.ts';

const parameters = Type.Object({ name: Type.String({ description: 'Tool name' }) }, { additionalProperties: false });

/**
 * A tool's long documentation: the file `<name>.md` in MANUALS_DIR when there is one, else the
 * manual the tool carries (an MCP tool's whole description and schema), else one generated from
 * its description and parameters.
 */
export function createToolManualTool(options: { registry: ToolRegistry; manualsDir: string }): Tool<Static<typeof parameters>> {
  const { registry, manualsDir } = options;
  return {
    name: 'tool_manual',
    description: "Read a tool's full manual (usage, examples, limits, errors) before unfamiliar use.",
    parameters,
    async execute({ name }) {
      const tool = registry.get(name)?.tool;
      const manual = /^[A-Za-z0-9_-]{1,64}$/.test(name) ? await readManual(path.join(manualsDir, `${name}.md`)) : undefined;
      if (manual !== undefined) return manual;
      if (!tool) {
        const names = registry.list().map((known) => known.name).join(', ');
        return { output: `There is no tool or manual named "${name}". Tools: ${names}.`, success: false };
      }
      return tool.manual ?? generatedManual(tool);
    },
  };
}

async function readManual(file: string): Promise<string | undefined> {
  try {
    return await readFile(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

function generatedManual(tool: Tool): string {
  const properties = (tool.parameters['properties'] ?? {}) as Record<string, JsonSchema>;
  const required = new Set((tool.parameters['required'] ?? []) as string[]);
  const lines = Object.entries(properties).map(([property, schema]) => {
    const type = Array.isArray(schema['enum']) ? `one of ${schema['enum'].join(', ')}` : String(schema['type'] ?? 'any');
    const description = typeof schema['description'] === 'string' ? `: ${schema['description']}` : '';
    return `- \`${property}\` (${type}${required.has(property) ? ', required' : ''})${description}`;
  });
  return [
    `# ${tool.name}`,
    '',
    tool.description,
    '',
    '## Parameters',
    lines.length > 0 ? lines.join('\n') : 'None.',
    '',
    '## Schema',
    '```json',
    JSON.stringify(tool.parameters, null, 2),
    '```',
  ].join('\n');
}
