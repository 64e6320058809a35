import type { JsonSchema } from '../tool.ts';

/** Words a period follows without ending the sentence ("e.g. a path", "et al. found"). */
const abbreviations = new Set(['e.g', 'eg', 'i.e', 'ie', 'cf', 'vs', 'approx', 'incl', 'excl', 'resp', 'al', 'mr', 'mrs', 'ms', 'dr', 'st', 'fig', 'ca']);

/**
 * The first `sentences` sentences of a description, on one line, at most `maxCharacters` long
 * (cut at a word, with "…", when even one sentence is longer). Only the first paragraph counts,
 * and a trailing fragment ending in ":" (an "Args:" heading) is left out. A period ends a sentence
 * only when whitespace and no lower-case letter follow and it does not end an abbreviation or
 * an initial, so "e.g. a file", "v1.2", "https://example.org/a.b" and "J. Smith" stay whole.
 */
export function shortDescription(text: string, options: { sentences: number; maxCharacters: number }): string {
  const paragraph = firstParagraph(text);
  const ends = sentenceEnds(paragraph);
  let short = paragraph;
  if (ends.length >= options.sentences) short = paragraph.slice(0, ends[options.sentences - 1]);
  else if (ends.length > 0 && paragraph.slice(ends.at(-1)).trim().endsWith(':')) short = paragraph.slice(0, ends.at(-1));
  short = short.trim();
  if (short.length <= options.maxCharacters) return short;
  // Too long: as many whole sentences as fit, else the first one cut at a word.
  const fitting = ends.filter((end) => end <= options.maxCharacters).at(-1);
  if (fitting !== undefined) return paragraph.slice(0, fitting).trim();
  const cut = short.slice(0, options.maxCharacters - 1);
  const lastSpace = cut.lastIndexOf(' ');
  return `${(lastSpace > options.maxCharacters / 2 ? cut.slice(0, lastSpace) : cut).replace(/[\s,;:.]+$/u, '')}…`;
}

/** The text up to the first blank line or list, its line breaks as spaces. */
function firstParagraph(text: string): string {
  const lines: string[] = [];
  for (const line of text.trim().split(/\r?\n/)) {
    if (line.trim() === '' || (lines.length > 0 && /^\s*(?:[-*\u2022]|\d+[.)])\s/.test(line))) break;
    lines.push(line.trim());
  }
  return lines.join(' ').replace(/\s+/g, ' ');
}

/** The offsets just after each sentence's final punctuation (and any closing quote or bracket). */
function sentenceEnds(text: string): number[] {
  const ends: number[] = [];
  const boundary = /([.!?]+)(["'\u201D\u2019)\]]*)(?=\s+(\S)|$)|[\u3002\uFF01\uFF1F]/gu;
  for (let match = boundary.exec(text); match !== null; match = boundary.exec(text)) {
    const end = match.index + match[0].length;
    const next = match[3];
    if (match[1]?.endsWith('.') && match[1].length === 1 && !match[2]) {
      if (next !== undefined && /\p{Ll}/u.test(next)) continue;
      const word = /(?:^|[\s(])([\p{L}.]+)$/u.exec(text.slice(0, match.index))?.[1] ?? '';
      if (abbreviations.has(word.toLowerCase()) || /^\p{Lu}$/u.test(word)) continue;
    }
    ends.push(end);
  }
  return ends;
}

/** Where one schema holds others: by key (`properties`…), in lists (`anyOf`…), or one (`items`…). */
const schemaMaps = ['properties', 'patternProperties', '$defs', 'definitions', 'dependentSchemas'];
const schemaLists = ['allOf', 'anyOf', 'oneOf', 'prefixItems'];
const schemaSingles = ['items', 'additionalItems', 'additionalProperties', 'contains', 'not', 'if', 'then', 'else', 'propertyNames', 'unevaluatedItems', 'unevaluatedProperties'];

/** The dialects Ajv's default instance reads: their `$schema` says nothing the validator needs. */
const defaultDialect = /^https?:\/\/json-schema\.org\/draft-0[4-7]\/schema#?$/;

const parameterDescription = { sentences: 1, maxCharacters: 160 };
const longParameterDescription = 160;

/**
 * The input schema as it is sent to the model with every request: `type: "object"` at the root
 * (added when absent; any other type is refused), the draft-07 `$schema` marker dropped, and
 * each parameter description longer than 160 characters cut to its first sentence. The full
 * schema stays in the tool's manual. Answers a message when the schema cannot be a tool's.
 */
export function modelParameters(inputSchema: unknown): { parameters: JsonSchema } | { message: string } {
  if (typeof inputSchema !== 'object' || inputSchema === null || Array.isArray(inputSchema)) {
    return { message: 'Its input schema is not a JSON object.' };
  }
  const root = inputSchema as JsonSchema;
  if (root['type'] !== undefined && root['type'] !== 'object') {
    return { message: `Its input schema must describe an object (arguments by name), not ${JSON.stringify(root['type'])}.` };
  }
  const { $schema, ...rest } = shortenDescriptions(root, 0);
  const keepsDialect = typeof $schema === 'string' && !defaultDialect.test($schema);
  return { parameters: { ...(keepsDialect && { $schema }), type: 'object', ...rest } };
}

function shortenDescriptions(schema: JsonSchema, depth: number): JsonSchema {
  if (depth > 32) return schema;
  const copy: JsonSchema = { ...schema };
  if (depth > 0 && typeof copy['description'] === 'string' && copy['description'].length > longParameterDescription) {
    copy['description'] = shortDescription(copy['description'], parameterDescription);
  }
  const inner = (value: unknown) => (isSchemaObject(value) ? shortenDescriptions(value, depth + 1) : value);
  for (const key of schemaMaps) {
    const map = copy[key];
    if (isSchemaObject(map)) copy[key] = Object.fromEntries(Object.entries(map).map(([name, value]) => [name, inner(value)]));
  }
  for (const key of schemaLists) if (Array.isArray(copy[key])) copy[key] = (copy[key] as unknown[]).map(inner);
  for (const key of schemaSingles) {
    const value = copy[key];
    copy[key] = Array.isArray(value) ? value.map(inner) : inner(value);
    if (value === undefined) delete copy[key];
  }
  return copy;
}

function isSchemaObject(value: unknown): value is JsonSchema {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
