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

/** Why a service did not do what was asked (`{ok: false, ...refusal}`): a stable code for programs, a sentence for people. */
export interface Refusal<Code extends string = string> {
  code: Code;
  message: string;
}

/** A refusal as the `{ok: false}` result of a service call. */
export function refusal<Code extends string>(code: Code, message: string): { ok: false } & Refusal<Code> {
  return { ok: false, code, message };
}
