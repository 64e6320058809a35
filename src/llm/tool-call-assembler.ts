// OpenAI-style streams send a tool call in fragments: the first carries the id and name,
// the following ones more argument text, all tagged with the call's index.
import { parseToolArguments } from './tool-arguments.ts';
import type { ToolCall } from './types.ts';

export interface ToolCallFragment {
  index?: number;
  id?: string;
  function?: { name?: string; arguments?: string };
}

interface PartialCall {
  id: string;
  name: string;
  argumentText: string;
}

export class ToolCallAssembler {
  private readonly calls = new Map<number, PartialCall>();
  private lastIndex = -1;

  add(fragment: ToolCallFragment): void {
    // A few servers leave out `index`; a fragment with a new id then starts a new call.
    const index = fragment.index ?? (fragment.id || this.calls.size === 0 ? this.calls.size : this.lastIndex);
    this.lastIndex = index;
    const existing = this.calls.get(index);
    if (!existing) {
      this.calls.set(index, {
        id: fragment.id ?? '',
        name: fragment.function?.name ?? '',
        argumentText: fragment.function?.arguments ?? '',
      });
      return;
    }
    if (!existing.id && fragment.id) existing.id = fragment.id;
    if (!existing.name && fragment.function?.name) existing.name = fragment.function.name;
    existing.argumentText += fragment.function?.arguments ?? '';
  }

  /** The calls gathered so far, in index order; the assembler is empty afterwards. */
  drain(): ToolCall[] {
    const finished = [...this.calls.entries()]
      .sort(([left], [right]) => left - right)
      .map(([index, call]) => ({
        id: call.id || `call_${index + 1}`,
        name: call.name,
        ...parseToolArguments(call.argumentText),
      }));
    this.calls.clear();
    return finished;
  }
}
