import { ErrorCode, McpError, type CallToolResult, type Tool as McpToolDefinition } from '@modelcontextprotocol/sdk/types.js';
import type { Tool, ToolOutput } from '../tool.ts';
import { compileArgumentsValidator } from '../validation.ts';
import { modelParameters, shortDescription } from './mcp-tool-description.ts';
import { mcpToolManual } from './mcp-tool-manual.ts';
import { isSanitised, mcpToolName } from './mcp-tool-name.ts';
import { toolOutputOfMcpResult } from './mcp-tool-result.ts';
import { mcpToolSubject } from './mcp-tool-subject.ts';
import { messageOf } from '../../failure.ts';

/** Calls one tool of a connected server (the SDK client's callTool with its timeout); the signal cancels it. */
export type McpCaller = (toolName: string, args: Record<string, unknown>, options: { signal: AbortSignal }) => Promise<CallToolResult>;

/** The SDK's own timeout (options.timeoutMs) answers first, saying the server was told to cancel; the registry's is the backstop. */
const timeoutMarginMs = 1_000;

const toolDescription = { sentences: 2, maxCharacters: 250 };
const longestErrorCharacters = 1_000;

/**
 * The Hearth tools of one MCP server's tool list: named `<server>__<tool>` (mcp-tool-name.ts),
 * described to the model in two sentences with the server named, the full text and schema in
 * `manual`. A tool whose schema cannot validate arguments, or whose name another of the server's
 * tools already took, is refused with a message instead.
 *
 * `destructive` only when the server says destructiveHint: true and not readOnlyHint: true. MCP
 * makes an unannotated tool destructive by default, but most servers annotate nothing: following
 * that default would put every call of those servers to the person, and a gate that asks about
 * everything gets approved without being read. Servers that do annotate (server-filesystem marks
 * write_file, edit_file and move_file) get their destructive tools asked about; profiles' rules
 * cover the rest.
 */
export function mcpTools(
  server: string,
  definitions: readonly McpToolDefinition[],
  call: McpCaller,
  options: { timeoutMs: number; trusted?: boolean },
): { tools: Tool[]; refused: { name: string; message: string }[] } {
  const tools: Tool[] = [];
  const refused: { name: string; message: string }[] = [];
  const names = hearthNames(server, definitions);
  const taken = new Map<string, string>();
  definitions.forEach((definition, index) => {
    const name = names[index]!;
    const holder = taken.get(name);
    if (holder !== undefined) {
      const why = holder === definition.name ? 'the server lists it twice' : `"${holder}" already has that name once characters outside A-Z, a-z, 0-9, _ and - are replaced`;
      refused.push({ name, message: `Tool "${definition.name}" of the MCP server ${server} was left out: ${why}.` });
      return;
    }
    const prepared = modelParameters(definition.inputSchema);
    if ('message' in prepared) {
      refused.push({ name, message: `Tool "${definition.name}" of the MCP server ${server} was left out. ${prepared.message}` });
      return;
    }
    try {
      compileArgumentsValidator(prepared.parameters);
    } catch (error) {
      refused.push({ name, message: `Tool "${definition.name}" of the MCP server ${server} was left out: its input schema is not a valid JSON Schema (${(error as Error).message}).` });
      return;
    }
    taken.set(name, definition.name);
    tools.push(createMcpTool({ server, definition, name, parameters: prepared.parameters, call, timeoutMs: options.timeoutMs, trusted: options.trusted === true }));
  });
  return { tools, refused };
}

/** Each definition's Hearth name; tools whose sanitised names clash get the hashed form, unless the server chose that name itself. */
function hearthNames(server: string, definitions: readonly McpToolDefinition[]): string[] {
  const plain = definitions.map((definition) => mcpToolName(server, definition.name));
  const originals = new Map<string, Set<string>>();
  definitions.forEach((definition, index) => originals.set(plain[index]!, (originals.get(plain[index]!) ?? new Set()).add(definition.name)));
  return definitions.map((definition, index) =>
    originals.get(plain[index]!)!.size > 1 && isSanitised(server, definition.name) ? mcpToolName(server, definition.name, { hashed: true }) : plain[index]!,
  );
}

interface McpToolParts {
  server: string;
  definition: McpToolDefinition;
  name: string;
  parameters: Tool['parameters'];
  call: McpCaller;
  timeoutMs: number;
  trusted: boolean;
}

function createMcpTool(parts: McpToolParts): Tool<Record<string, unknown>> {
  const { server, definition, name, call, timeoutMs } = parts;
  const annotations = definition.annotations;
  const destructive = annotations?.destructiveHint === true && annotations.readOnlyHint !== true;
  const summary = shortDescription(definition.description ?? definition.title ?? annotations?.title ?? '', toolDescription);
  return {
    name,
    description: `${summary || `Tool "${definition.name}".`} (MCP server ${server})`,
    parameters: parts.parameters,
    manual: mcpToolManual({ name, server, definition, destructive }),
    destructive,
    // The tool and what it acts on: a person allowing it for the session allows that target only.
    subject: (args) => mcpToolSubject(args, parts.parameters),
    ...(!parts.trusted && { untrustedSource: () => `MCP server ${server}` }),
    timeoutMs: timeoutMs + timeoutMarginMs,
    async execute(args, context): Promise<ToolOutput> {
      try {
        const output = toolOutputOfMcpResult(await call(definition.name, args, { signal: context.signal }));
        // An error the server reports is in its own words, outside content like its answers.
        if (typeof output !== 'string' && output.success === false && !parts.trusted) return { ...output, outside: { source: `MCP server ${server}`, quotable: true } };
        return output;
      } catch (error) {
        return { output: describeFailure(error, { server, name, signal: context.signal, timeoutMs }), success: false };
      }
    },
  };
}

/** A call that got no answer, as the model should read it (execute-tool-call.ts words the stop itself, before this line). */
function describeFailure(error: unknown, call: { server: string; name: string; signal: AbortSignal; timeoutMs: number }): string {
  const { server, name } = call;
  if (call.signal.aborted) return `Cancelled: the MCP server ${server} was told to stop the call.`;
  if (error instanceof McpError) {
    const message = error.message.replace(/^MCP error -?\d+: /, '');
    switch (error.code) {
      case ErrorCode.RequestTimeout: {
        const timeout = typeof (error.data as { timeout?: unknown } | undefined)?.timeout === 'number' ? (error.data as { timeout: number }).timeout : call.timeoutMs;
        return `Error: ${name} timed out after ${Math.round(timeout / 100) / 10} s; the MCP server ${server} was told to stop the call. Try a smaller request, or ask the person to raise MCP_TOOL_TIMEOUT_MS.`;
      }
      case ErrorCode.ConnectionClosed:
        return `Error: the connection to the MCP server ${server} closed during the call (${message}); the server may have crashed or restarted, and whether the call took effect is unknown.`;
      default:
        return `Error: the MCP server ${server} refused the call: ${cut(message)}`;
    }
  }
  return `Error: ${name} failed: ${cut(messageOf(error))}`;
}

function cut(text: string): string {
  return text.length > longestErrorCharacters ? `${text.slice(0, longestErrorCharacters)}…` : text;
}
