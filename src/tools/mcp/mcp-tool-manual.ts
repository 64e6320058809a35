import type { Tool as McpToolDefinition } from '@modelcontextprotocol/sdk/types.js';
import type { JsonSchema } from '../tool.ts';

/** Nesting shown before the rest is left to the schema itself. */
const maximumDepth = 6;

/**
 * What `tool_manual` answers for an MCP tool: where it comes from, the server's hints, the whole
 * description the model only gets the start of, and every parameter with its type, limits,
 * default and full description, nested objects indented under their parent.
 */
export function mcpToolManual(options: { name: string; server: string; definition: McpToolDefinition; destructive: boolean }): string {
  const { name, server, definition, destructive } = options;
  const title = definition.title ?? definition.annotations?.title;
  const origin = `Tool "${definition.name}"${title ? ` (${title})` : ''} of the MCP server ${server}.`;
  const hints = [
    definition.annotations?.readOnlyHint === true && 'The server says it only reads.',
    destructive && 'The server says it may destroy or overwrite things: under a default of allow, the person is asked before it runs.',
  ].filter(Boolean);
  const parameters = parameterLines(definition.inputSchema as JsonSchema, 0);
  return [
    `# ${name}`,
    '',
    [origin, ...hints].join(' '),
    '',
    definition.description?.trim() || 'The server gives no description.',
    '',
    '## Parameters',
    parameters.length > 0 ? parameters.join('\n') : 'None.',
  ].join('\n');
}

function parameterLines(schema: JsonSchema, depth: number): string[] {
  const properties = schema['properties'];
  if (typeof properties !== 'object' || properties === null || depth >= maximumDepth) return [];
  const required = new Set(Array.isArray(schema['required']) ? (schema['required'] as string[]) : []);
  const indent = '  '.repeat(depth);
  return Object.entries(properties as Record<string, unknown>).flatMap(([property, value]) => {
    const child = (typeof value === 'object' && value !== null ? value : {}) as JsonSchema;
    const details = [typeOf(child), required.has(property) && 'required', ...limitsOf(child)].filter(Boolean).join(', ');
    const description = typeof child['description'] === 'string' ? `: ${child['description'].replace(/\s*\n\s*/g, ' ')}` : '';
    const items = child['items'];
    const nested = typeof items === 'object' && items !== null && !Array.isArray(items) ? (items as JsonSchema) : child;
    return [`${indent}- \`${property}\` (${details})${description}`, ...parameterLines(nested, depth + 1)];
  });
}

/** "string", "integer or null", `one of "a", "b"`, "array of string", "any of: string | number"… */
function typeOf(schema: JsonSchema): string {
  if (Array.isArray(schema['enum'])) return `one of ${schema['enum'].map((value) => JSON.stringify(value)).join(', ')}`;
  if ('const' in schema) return `exactly ${JSON.stringify(schema['const'])}`;
  const alternatives = (schema['anyOf'] ?? schema['oneOf']) as unknown;
  if (Array.isArray(alternatives)) return `any of: ${alternatives.map((alternative) => typeOf((alternative ?? {}) as JsonSchema)).join(' | ')}`;
  if (typeof schema['$ref'] === 'string') return `see ${schema['$ref'].split('/').at(-1)}`;
  const type = schema['type'];
  const named = Array.isArray(type) ? type.join(' or ') : typeof type === 'string' ? type : 'any';
  const format = typeof schema['format'] === 'string' ? ` (${schema['format']})` : '';
  const items = schema['items'];
  if (named === 'array' && typeof items === 'object' && items !== null && !Array.isArray(items)) return `array of ${typeOf(items as JsonSchema)}`;
  return named + format;
}

function limitsOf(schema: JsonSchema): string[] {
  const limits: string[] = [];
  const number = (key: string) => (typeof schema[key] === 'number' ? (schema[key] as number) : undefined);
  const [minimum, maximum] = [number('minimum'), number('maximum')];
  if (minimum !== undefined && maximum !== undefined) limits.push(`${minimum} to ${maximum}`);
  else if (minimum !== undefined) limits.push(`at least ${minimum}`);
  else if (maximum !== undefined) limits.push(`at most ${maximum}`);
  if (number('exclusiveMinimum') !== undefined) limits.push(`more than ${number('exclusiveMinimum')}`);
  if (number('exclusiveMaximum') !== undefined) limits.push(`less than ${number('exclusiveMaximum')}`);
  if (number('minLength') !== undefined) limits.push(`at least ${number('minLength')} characters`);
  if (number('maxLength') !== undefined) limits.push(`at most ${number('maxLength')} characters`);
  if (number('minItems') !== undefined) limits.push(`at least ${number('minItems')} items`);
  if (number('maxItems') !== undefined) limits.push(`at most ${number('maxItems')} items`);
  if (typeof schema['pattern'] === 'string') limits.push(`matching /${schema['pattern']}/`);
  if ('default' in schema) limits.push(`default ${JSON.stringify(schema['default'])}`);
  return limits;
}
