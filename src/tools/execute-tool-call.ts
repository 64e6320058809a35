import { toToolResult, type ToolContext, type ToolResult } from './tool.ts';
import type { ToolRegistry } from './tool-registry.ts';

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
}

const failure = (output: string): ToolResult => ({ output, success: false });

/**
 * Runs one tool call. Every way a call can go wrong — unknown tool, bad arguments,
 * a thrown error, a timeout, a stop — becomes a `success:false` result the model can act on.
 */
export async function executeToolCall(call: ToolCallRequest, options: ExecuteOptions): Promise<ToolResult> {
  const { registry, allowedNames, context } = options;
  const entry = allowedNames.includes(call.name) ? registry.get(call.name) : undefined;
  if (!entry) {
    const available = allowedNames.filter((name) => registry.get(name)).join(', ');
    return failure(`Error: there is no tool named "${call.name}". Available tools: ${available || 'none'}.`);
  }
  if (call.invalid_arguments !== undefined) {
    return failure(
      `Error: the arguments for ${call.name} were not a JSON object (${truncate(call.invalid_arguments, 200)}). Call it again with valid JSON.`,
    );
  }
  const verdict = entry.validate(call.arguments);
  if (!verdict.ok) {
    return failure(
      `Error: invalid arguments for ${call.name}: ${verdict.message}. Expected parameters: ${JSON.stringify(entry.tool.parameters)}`,
    );
  }
  if (context.signal.aborted) return failure('Stopped by the user before the tool ran.');

  const timeoutMs = entry.tool.timeoutMs ?? options.defaultTimeoutMs;
  const timeout = new AbortController();
  const signal = AbortSignal.any([context.signal, timeout.signal]);
  let timer: NodeJS.Timeout | undefined;
  const stopped = new Promise<ToolResult>((resolve) => {
    timer = setTimeout(() => timeout.abort(), timeoutMs);
    signal.addEventListener(
      'abort',
      () =>
        resolve(
          timeout.signal.aborted
            ? failure(`Error: ${call.name} timed out after ${formatSeconds(timeoutMs)}. Try a smaller request or a longer timeout.`)
            : failure(`Stopped by the user while ${call.name} was running.`),
        ),
      { once: true },
    );
  });
  const running = entry.tool.execute(call.arguments, { ...context, signal }).then(toToolResult, (error: unknown) =>
    failure(`Error: ${call.name} failed: ${error instanceof Error ? error.message : String(error)}`),
  );
  try {
    return await Promise.race([running, stopped]);
  } finally {
    clearTimeout(timer);
  }
}

function truncate(text: string, length: number): string {
  return text.length > length ? `${text.slice(0, length)}…` : text;
}

function formatSeconds(milliseconds: number): string {
  return `${Math.round(milliseconds / 100) / 10} s`;
}
