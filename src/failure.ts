// How something that did not work is put into words, in one shape for every layer.

/** What a tool answers when its call did not do what was asked, in words the model can act on. */
export interface ToolFailure {
  output: string;
  success: false;
}

export function toolFailure(output: string): ToolFailure {
  return { output, success: false };
}

/** The message of whatever was thrown: an Error's own, anything else as text. */
export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
