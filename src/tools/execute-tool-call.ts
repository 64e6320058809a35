import { outsideSourceOf, toToolResult, type ToolContext, type ToolResult } from './tool.ts';
import type { RegisteredTool, ToolRegistry } from './tool-registry.ts';
import { messageOf, toolFailure } from '../failure.ts';

/** Decides, after the arguments are valid and before the tool runs, whether it may run at all. */
export type Authorize = (entry: RegisteredTool, args: Record<string, unknown>) => Promise<{ allowed: true } | { allowed: false; message: string }>;

export interface ToolCallRequest {
  name: string;
  arguments: Record<string, unknown>;
  invalid_arguments?: string;
}

export interface ExecuteOptions {
  registry: ToolRegistry;
  /** The names the active profile exposes; anything else is refused. */
  allowedNames: readonly string[];
  context: ToolContext;
  defaultTimeoutMs: number;
  authorize: Authorize;
}

/** How long a stopped or timed-out tool may take to return its partial result. */
const abortGraceMs = 1_000;

function delay(milliseconds: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, milliseconds).unref());
}

/**
 * Runs one tool call. Every way a call can go wrong — unknown tool, bad arguments,
 * a thrown error, a timeout, a stop — becomes a `success:false` result the model can act on.
 */
export async function executeToolCall(call: ToolCallRequest, options: ExecuteOptions): Promise<ToolResult> {
  const { registry, allowedNames, context } = options;
  const entry = allowedNames.includes(call.name) ? registry.get(call.name) : undefined;
  if (!entry) {
    const available = allowedNames.filter((name) => registry.get(name)).join(', ');
    return toolFailure(`Error: there is no tool named "${call.name}". Available tools: ${available || 'none'}.`);
  }
  if (call.invalid_arguments !== undefined) {
    return toolFailure(
      `Error: the arguments for ${call.name} were not a JSON object (${truncate(call.invalid_arguments, 200)}). Call it again with valid JSON.`,
    );
  }
  const verdict = entry.validate(call.arguments);
  if (!verdict.ok) {
    return toolFailure(
      `Error: invalid arguments for ${call.name}: ${verdict.message}. Expected parameters: ${JSON.stringify(entry.tool.parameters)}`,
    );
  }
  if (context.signal.aborted) return toolFailure('Stopped by the user before the tool ran.');
  // Nobody is asked to approve a call that cannot run anyway.
  const unready = await entry.tool.precheck?.(call.arguments, context);
  if (unready !== undefined) return toolFailure(unready);
  const authorization = await options.authorize(entry, call.arguments);
  if (!authorization.allowed) return toolFailure(authorization.message);
  if (context.signal.aborted) return toolFailure('Stopped by the user before the tool ran.');

  const declared = outsideSourceOf(entry.tool, call.arguments);
  const result = await runAuthorized(entry, call, options);
  // A failure is the tool's own words (refused, timed out) unless the tool says it carries the source's (an error page).
  if (declared === undefined || !result.success || result.outside) return result;
  return { ...result, outside: { source: declared, quotable: true } };
}

async function runAuthorized(entry: RegisteredTool, call: ToolCallRequest, options: ExecuteOptions): Promise<ToolResult> {
  const { context } = options;
  const timeoutMs = entry.tool.timeoutMs ?? options.defaultTimeoutMs;
  const timeout = AbortSignal.timeout(timeoutMs);
  const signal = AbortSignal.any([context.signal, timeout]);
  const running = entry.tool.execute(call.arguments, { ...context, signal }).then(toToolResult, (error: unknown) =>
    toolFailure(`Error: ${call.name} failed: ${messageOf(error)}`),
  );
  const interrupted = new Promise<'interrupted'>((resolve) => signal.addEventListener('abort', () => resolve('interrupted'), { once: true }));
  const first = await Promise.race([running, interrupted]);
  if (first !== 'interrupted') return first;

  // A tool that honours its signal gets a moment to hand back what it has (a command's output so far).
  const late = await Promise.race([running, delay(abortGraceMs).then(() => undefined)]);
  const reason = timeout.aborted
    ? `Error: ${call.name} timed out after ${formatSeconds(timeoutMs)}. Try a smaller request or a longer timeout.`
    : `Stopped by the user while ${call.name} was running.`;
  return toolFailure(late && late.output !== '' ? `${reason}\n${late.output}` : reason);
}

function truncate(text: string, length: number): string {
  return text.length > length ? `${text.slice(0, length)}…` : text;
}

function formatSeconds(milliseconds: number): string {
  return `${Math.round(milliseconds / 100) / 10} s`;
}
