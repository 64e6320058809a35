import { isRecord } from './errors.ts';
import type { ToolCall } from './types.ts';

type ParsedArguments = Pick<ToolCall, 'arguments' | 'invalid_arguments'>;

/** Tool-call arguments as an object; raw text the model sent is kept when it is not a JSON object. */
export function parseToolArguments(raw: unknown): ParsedArguments {
  if (raw === undefined || raw === null) return { arguments: {} };
  if (isRecord(raw)) return { arguments: raw };
  if (typeof raw !== 'string') return { arguments: {}, invalid_arguments: JSON.stringify(raw) };
  if (raw.trim() === '') return { arguments: {} };
  try {
    const parsed: unknown = JSON.parse(raw);
    if (isRecord(parsed)) return { arguments: parsed };
  } catch {
    // Falls through: the model wrote something that is not JSON.
  }
  return { arguments: {}, invalid_arguments: raw };
}
