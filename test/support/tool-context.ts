import { toToolResult, type Tool, type ToolContext, type ToolResult } from '../../src/tools/tool.ts';

/** What a tool gets in a top-level session `session-1`, with a signal nobody aborts; `overrides` replace any part. */
export function toolContext(overrides: Partial<ToolContext> = {}): ToolContext {
  return { sessionId: 'session-1', signal: new AbortController().signal, emit: () => {}, isSubagent: false, ...overrides };
}

/** Runs `tool` with `args` in a `toolContext(overrides)` and gives its output as a ToolResult. */
export async function runTool(tool: Tool, args: Record<string, unknown>, overrides: Partial<ToolContext> = {}): Promise<ToolResult> {
  return toToolResult(await tool.execute(args, toolContext(overrides)));
}
