// What a model name may be before it is sent to Ollama: `name:tag`, `namespace/name:tag`,
// `hf.co/user/repo:quant`. Conservative on purpose: the name goes into URLs and a file name.

const longestName = 200;
const namePattern = /^[A-Za-z0-9][A-Za-z0-9._-]*(?:\/[A-Za-z0-9][A-Za-z0-9._-]*){0,3}(?::[A-Za-z0-9][A-Za-z0-9._-]*)?$/;

/** Why `name` is not a model name Hearth passes on, or undefined when it is one. */
export function modelNameProblem(name: string): string | undefined {
  if (name.length === 0) return 'The model name is empty.';
  if (name.length > longestName) return `The model name is longer than ${longestName} characters.`;
  if (!namePattern.test(name) || name.includes('..')) {
    return `"${name}" is not a model name: use name:tag, namespace/name:tag or hf.co/user/repo:quant (letters, digits, ".", "_", "-").`;
  }
  return undefined;
}
