// Shared by the tool-call scenarios (6, 7, 9, 20): time one real tool call in this process, and check it worked.
import type { Tool, ToolContext, ToolResult } from '../../src/tools/tool.ts';
import { toToolResult } from '../../src/tools/tool.ts';
import { median, milliseconds, percentile } from '../statistics.ts';

/** `work`, or a failure naming `what` once `milliseconds` pass: a scenario fails rather than holding up the bench. */
export function withDeadline<T>(work: Promise<T>, milliseconds: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not finish within ${milliseconds / 1000} s`)), milliseconds);
  });
  return Promise.race([work, late]).finally(() => clearTimeout(timer));
}

export function toolContext(sessionId: string, signal: AbortSignal): ToolContext {
  return { sessionId, signal, emit: () => {}, isSubagent: false };
}

/** `execute` called → its promise settled, in ms; throws when the call did not succeed. */
export async function timedCall<Arguments>(
  tool: Tool<Arguments>,
  args: Arguments,
  context: ToolContext,
  check?: (result: ToolResult) => string | undefined,
): Promise<{ milliseconds: number; result: ToolResult }> {
  const startedAt = performance.now();
  const output = await tool.execute(args, context);
  const elapsed = performance.now() - startedAt;
  const result = toToolResult(output);
  const problem = result.success ? check?.(result) : 'it failed';
  if (problem !== undefined) {
    throw new Error(`${tool.name} ${JSON.stringify(args)} in session ${context.sessionId}: ${problem}: ${result.output.replaceAll('\n', ' ⏎ ').slice(0, 300)}`);
  }
  return { milliseconds: elapsed, result };
}

export function medianAndP95(samples: readonly number[], digits = 1): string {
  return `median ${milliseconds(median(samples), digits)} (p95 ${milliseconds(percentile(samples, 0.95), digits)})`;
}

export function spread(samples: readonly number[], digits = 1): string {
  return `min ${milliseconds(Math.min(...samples), digits)}, max ${milliseconds(Math.max(...samples), digits)}`;
}
