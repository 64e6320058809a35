import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import type { ErrorObject } from 'ajv';
import matter from 'gray-matter';
import { buildPolicy } from '../approvals/policy.ts';
import { defaultProfileAccess } from '../people/rights.ts';
import { parseHeartbeat } from './heartbeat-settings.ts';
import { validateFrontMatter } from './front-matter-validator.ts';
import type { Profile } from './profile.ts';
import { fieldName, valueAt } from '../json-pointer.ts';

export interface ProfileError {
  file: string;
  message: string;
}

export type ParseProfileResult = { ok: true; profile: Profile } | { ok: false; error: ProfileError };

const matterOptions = {
  engines: {
    // gray-matter evaluates `---js` front matter with eval(); a profile file must never run code.
    javascript: () => {
      throw new Error('front matter must be YAML');
    },
  },
};

/**
 * The profiles of `directory` (the shipped ones), with each file of `overridesDirectory` (the
 * person's, under DATA_DIR) taking the place of the same-named one: a profile or a heartbeat checklist.
 */
export async function loadProfiles(
  directory: string,
  overridesDirectory?: string,
): Promise<{ profiles: Profile[]; errors: ProfileError[] }> {
  const files = new Map<string, string>();
  for (const folder of layers(directory, overridesDirectory)) {
    for (const name of await markdownFiles(folder, folder === directory)) files.set(name, path.join(folder, name));
  }
  const names = [...files.keys()].filter((name) => !isHeartbeatChecklist(name)).sort();

  const profiles: Profile[] = [];
  const errors: ProfileError[] = [];
  for (const name of names) {
    const file = files.get(name)!;
    let text: string;
    try {
      text = await readFile(file, 'utf8');
    } catch (error) {
      // Deleted between readdir and readFile (or a dangling editor lock link): not a profile any more.
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') continue;
      errors.push({ file, message: `cannot read the file: ${(error as Error).message}` });
      continue;
    }
    const result = parseProfile(file, text);
    if (!result.ok) {
      errors.push(result.error);
      continue;
    }
    const checklist = await readHeartbeatChecklist(files.get(result.profile.id + heartbeatSuffix));
    if (typeof checklist === 'object') errors.push(checklist);
    profiles.push(typeof checklist === 'string' ? { ...result.profile, heartbeat_checklist: checklist } : result.profile);
  }
  return { profiles, errors };
}

/** The folders to read, later ones overriding: one when both name the same folder. */
function layers(directory: string, overridesDirectory: string | undefined): string[] {
  return overridesDirectory === undefined || path.resolve(overridesDirectory) === path.resolve(directory) ? [directory] : [directory, overridesDirectory];
}

/** The `.md` files of a folder; a missing folder has none unless it is `required`. */
async function markdownFiles(folder: string, required: boolean): Promise<string[]> {
  let entries;
  try {
    entries = await readdir(folder, { withFileTypes: true });
  } catch (error) {
    if (!required && (error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw error;
  }
  return entries.filter((entry) => !entry.isDirectory() && entry.name.endsWith('.md') && !entry.name.startsWith('.')).map((entry) => entry.name);
}

const heartbeatSuffix = '.heartbeat.md';

/** `<id>.heartbeat.md` is a profile's heartbeat checklist, not a profile. */
export function isHeartbeatChecklist(fileName: string): boolean {
  return fileName.endsWith(heartbeatSuffix);
}

/** The checklist's text; undefined when the profile has none (or it is empty). */
async function readHeartbeatChecklist(file: string | undefined): Promise<string | undefined | ProfileError> {
  if (file === undefined) return undefined;
  try {
    const text = (await readFile(file, 'utf8')).replace(/^\uFEFF/, '').trim();
    return text === '' ? undefined : text;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    return { file, message: `cannot read the heartbeat checklist: ${(error as Error).message}` };
  }
}

export function parseProfile(file: string, text: string): ParseProfileResult {
  const fail = (message: string): ParseProfileResult => ({ ok: false, error: { file, message } });
  const source = text.replace(/^\uFEFF/, '');

  if (!/^---\w*[^\S\r\n]*\r?\n/.test(source)) {
    return fail('missing front matter: the file must start with a "---" line');
  }
  if (!/\r?\n---[^\S\r\n]*(\r?\n|$)/.test(source.slice(3))) {
    return fail('the front matter is not closed by a "---" line');
  }

  let parsed: matter.GrayMatterFile<string>;
  try {
    parsed = matter(source, matterOptions);
  } catch (error) {
    return fail(`invalid front matter: ${describeParseError(error)}`);
  }

  const data: unknown = parsed.data;
  if (typeof data !== 'object' || data === null || Array.isArray(data)) {
    return fail('the front matter must be a YAML mapping of "key: value" lines');
  }
  // YAML `model:` with no value reads as null; treat it as "not set" so the default applies.
  const frontMatter = Object.fromEntries(Object.entries(data).filter(([, value]) => value !== null));

  if (!validateFrontMatter(frontMatter)) {
    return fail(describeSchemaErrors(validateFrontMatter.errors ?? [], frontMatter));
  }

  const expectedId = path.basename(file).replace(/\.md$/, '');
  if (frontMatter.id !== expectedId) {
    return fail(`id "${frontMatter.id}" does not match the file name "${expectedId}"`);
  }

  const prompt = parsed.content.trim();
  if (prompt === '') {
    return fail('the prompt is empty: write the system prompt below the front matter');
  }

  const approvals = buildPolicy(frontMatter.approvals);
  if (typeof approvals === 'string') return fail(approvals);

  const heartbeat = frontMatter.heartbeat === undefined ? undefined : parseHeartbeat(frontMatter.heartbeat);
  if (typeof heartbeat === 'string') return fail(heartbeat);

  return {
    ok: true,
    profile: {
      id: frontMatter.id,
      name: frontMatter.name,
      description: frontMatter.description ?? '',
      examples: frontMatter.examples ?? [],
      ...(frontMatter.model === undefined ? {} : { model: frontMatter.model }),
      ...(frontMatter.backend === undefined ? {} : { backend: frontMatter.backend }),
      temperature: frontMatter.temperature ?? 0.7,
      max_iterations: frontMatter.max_iterations ?? 25,
      planning_enabled: frontMatter.planning_enabled ?? false,
      tools: frontMatter.tools ?? [],
      user_tools: frontMatter.user_tools ?? true,
      mcp_tools: frontMatter.mcp_tools ?? true,
      scratchpad_sections: frontMatter.scratchpad_sections ?? [],
      approvals,
      jail: { ...frontMatter.jail },
      untrusted: { allow: frontMatter.untrusted?.allow ?? [] },
      people: frontMatter.people ?? defaultProfileAccess.people,
      approvers: frontMatter.approvers ?? defaultProfileAccess.approvers,
      ...(heartbeat && { heartbeat }),
      prompt,
      file,
    },
  };
}

function describeSchemaErrors(errors: ErrorObject[], data: Record<string, unknown>): string {
  const messages = errors.map((error) => describeSchemaError(error, data));
  return [...new Set(messages)].join('; ');
}

function describeSchemaError(error: ErrorObject, data: Record<string, unknown>): string {
  const field = fieldName(error.instancePath);
  switch (error.keyword) {
    case 'required':
      return `missing required field "${String(error.params.missingProperty)}"`;
    case 'additionalProperties':
      return `unknown field "${String(error.params.additionalProperty)}"`;
    case 'enum':
      return `${field} must be one of: ${(error.params.allowedValues as unknown[]).join(', ')}`;
    case 'type':
      return `${field} must be ${describeType(String(error.params.type))}, not ${describeValue(valueAt(data, error.instancePath))}`;
    case 'pattern':
      if (error.instancePath === '/id') {
        return `id ${describeValue(data.id)} must be lowercase letters, digits and underscores, starting with a letter (at most 64 characters)`;
      }
      if (error.instancePath.startsWith('/tools/')) {
        return `${field} ${describeValue(valueAt(data, error.instancePath))} must be a tool name (letters, digits, _ or -, at most 64 characters), mcp:<server> or *`;
      }
      return `${field} ${describeValue(valueAt(data, error.instancePath))} must match ${String(error.params.pattern)}`;
    case 'uniqueItems':
      return `${field} lists an item twice`;
    default:
      return `${field} ${error.message ?? 'is invalid'}`;
  }
}

function describeParseError(error: unknown): string {
  // js-yaml errors carry a multi-line code excerpt in `message`; `reason` and `mark` say the same in one line.
  const { reason, mark } = error as { reason?: string; mark?: { line: number; column: number } };
  if (reason === undefined || mark === undefined) return (error as Error).message;
  // The block handed to js-yaml starts right after the opening "---", so its 0-based line is the file's 1-based line.
  return `${reason} at line ${mark.line + 1}, column ${mark.column + 1}`;
}

function describeType(type: string): string {
  if (type === 'array') return 'a list';
  if (type === 'object') return 'a mapping';
  return type === 'integer' ? 'an integer' : `a ${type}`;
}

function describeValue(value: unknown): string {
  if (value === null) return 'null';
  if (value instanceof Date) return 'a date';
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'object') return 'a mapping';
  return JSON.stringify(value) ?? String(value);
}
