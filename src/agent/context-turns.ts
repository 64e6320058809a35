// How the model's context divides into turns, for compression and for cutting a request
// down to the window: both cut only where a turn begins.

/** Opens every summary message, so the model (and fit-request) can tell one from a person's words. */
export const summaryLabel = '[Summary of the earlier conversation: older messages were condensed to save space.]';

/** The synthetic user message carrying an image a tool loaded (agent-loop.ts). */
const loadedImagePrefix = '[Image loaded by ';

export interface TurnMessage {
  role: string;
  content: string;
  tool_calls?: readonly unknown[];
  is_summary?: boolean;
}

export function isSummary(message: TurnMessage): boolean {
  return message.is_summary ?? (message.role === 'user' && message.content.startsWith(summaryLabel));
}

/**
 * Where turns begin: a turn is a person's message and everything up to the next one. A
 * tool's loaded image and a summary begin none, and neither does a user message inside
 * an open tool group, so a cut at a turn start never separates a call from its results.
 * Messages before the first start (an earlier summary) belong to no turn.
 */
export function turnStarts(messages: readonly TurnMessage[]): number[] {
  const starts: number[] = [];
  let awaitedResults = 0;
  for (let index = 0; index < messages.length; index++) {
    const message = messages[index]!;
    if (message.role === 'assistant') awaitedResults = message.tool_calls?.length ?? 0;
    else if (message.role === 'tool') awaitedResults = Math.max(0, awaitedResults - 1);
    else if (message.role === 'user' && awaitedResults === 0 && !message.content.startsWith(loadedImagePrefix) && !isSummary(message)) {
      starts.push(index);
    }
  }
  return starts;
}
