import type { JsonSchema } from '../tool.ts';

/** Arguments that name what a call acts on, in the order they are shown. */
const namingArguments = ['path', 'paths', 'source', 'destination', 'file', 'filename', 'file_path', 'filepath', 'directory', 'dir', 'folder', 'url', 'uri', 'name', 'id'];
const plainValue = /^[^\s,()=\\"]+$/;

function shown(value: unknown): string {
  if (typeof value === 'string' && plainValue.test(value)) return value;
  return JSON.stringify(value) ?? String(value);
}

function isScalar(value: unknown): boolean {
  return typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean';
}

/**
 * What a call of an MCP tool acts on, as approval rules and the person see it: `path=notes.txt`
 * or `source=a, destination=b` (a rule `files__write_file(path=/home/me/Documents/*)` matches
 * it; for a call without arguments, empty, the tool's name stands in). The arguments shown are
 * those that name a target (a path, a URL…), else the schema's first required scalar, else the
 * first scalar given, else all of them as JSON; content is left to the card's arguments. An
 * allowance for the session is kept for this subject, so it covers the same tool on the same
 * target only.
 */
export function mcpToolSubject(args: Record<string, unknown>, parameters: JsonSchema): string {
  const named = namingArguments.filter((key) => args[key] !== undefined && (isScalar(args[key]) || Array.isArray(args[key])));
  let keys = named;
  if (keys.length === 0) {
    const required = Array.isArray(parameters.required) ? (parameters.required as unknown[]).filter((key): key is string => typeof key === 'string') : [];
    const main = required.find((key) => isScalar(args[key])) ?? Object.keys(args).find((key) => isScalar(args[key]));
    keys = main === undefined ? [] : [main];
  }
  // Nothing names a target (only lists or objects): the whole arguments, so an allowance covers this very call only.
  if (keys.length === 0) return Object.keys(args).length === 0 ? '' : JSON.stringify(args);
  return keys.map((key) => `${key}=${shown(args[key])}`).join(', ');
}
