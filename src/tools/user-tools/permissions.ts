import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type { ToolPermission } from './protocol.ts';
import { writeFileAtomically } from '../../atomic-file.ts';

/**
 * What a user tool may ask for beyond the sandbox, with `export const permissions = { … }`.
 * A permission runs only when the person granted it: write_tool asks them, and records the
 * grant in `permissions.json` in TOOLS_DIR, a file the model cannot write by itself.
 */
export const toolPermissions: readonly ToolPermission[] = ['childProcess', 'worker', 'network'];

export const permissionsFileName = 'permissions.json';

/** For the person who approves: what each permission lets a tool do. */
export const permissionMeanings: Record<ToolPermission, string> = {
  childProcess: 'childProcess (run programs inside its jail)',
  worker: 'worker (start worker threads)',
  network: "network (connect out to the network and the LAN; never to Hearth itself or this machine's loopback)",
};

export interface Grant {
  permissions: ToolPermission[];
  /** SHA-256 of the tool's source file when granted; the grant lapses when the file changes. Absent: any content. */
  sha256?: string;
  granted_at?: string;
}

export type Grants = Record<string, Grant>;

export function sourceDigest(code: string | Buffer): string {
  return createHash('sha256').update(code).digest('hex');
}

const declarationPattern = /\bexport\s+(?:const|let|var)\s+permissions\s*(?::[^=]*)?=\s*\{([^}]*)\}/;

/**
 * The permissions a module's source declares, read from its text without running it: only the
 * documented form `export const permissions = { childProcess: true, worker: true }` counts.
 * (write_tool refuses a module whose loaded declaration asks for more than this finds.)
 */
export function declaredInSource(code: string): ToolPermission[] {
  const body = declarationPattern.exec(withoutComments(code))?.[1];
  if (body === undefined) return [];
  return toolPermissions.filter((permission) => new RegExp(`(?:\\b|["'])${permission}["']?\\s*:\\s*true\\b`).test(body));
}

/**
 * The code with its comments blanked, strings kept, so a commented-out declaration does not ask.
 * It reads template literals as plain strings; where it misreads, write_tool's check of the loaded
 * module refuses the tool, never grants more than was asked.
 */
function withoutComments(code: string): string {
  let result = '';
  for (let index = 0; index < code.length; ) {
    const character = code[index]!;
    const next = code[index + 1];
    if (character === '/' && next === '/') {
      const end = code.indexOf('\n', index);
      index = end === -1 ? code.length : end;
    } else if (character === '/' && next === '*') {
      const end = code.indexOf('*/', index + 2);
      index = end === -1 ? code.length : end + 2;
      result += ' ';
    } else if (character === '"' || character === "'" || character === '`') {
      let end = index + 1;
      while (end < code.length && code[end] !== character) end += code[end] === '\\' ? 2 : 1;
      result += code.slice(index, end + 1);
      index = end + 1;
    } else {
      result += character;
      index += 1;
    }
  }
  return result;
}

export function describePermissions(permissions: readonly ToolPermission[]): string {
  return permissions.map((permission) => permissionMeanings[permission]).join(' and ');
}

/** The grants in TOOLS_DIR/permissions.json; a missing file is no grant, a malformed one is reported. */
export async function readGrants(toolsDir: string): Promise<{ grants: Grants; problem?: string }> {
  let text: string;
  try {
    text = await readFile(path.join(toolsDir, permissionsFileName), 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { grants: {} };
    throw error;
  }
  const shape = 'it must be a JSON object: { "tool_name": { "permissions": ["childProcess", "worker"] } }; no permission is granted';
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    return { grants: {}, problem: `Not JSON (${(error as Error).message}): ${shape}.` };
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return { grants: {}, problem: `${shape}.` };
  const grants: Grants = {};
  for (const [name, entry] of Object.entries(parsed)) {
    const permissions = (entry as { permissions?: unknown } | null)?.permissions;
    if (!Array.isArray(permissions) || permissions.some((permission) => !toolPermissions.includes(permission))) {
      return { grants: {}, problem: `The entry for "${name}" is malformed: ${shape}.` };
    }
    const { sha256, granted_at } = entry as Grant;
    grants[name] = {
      permissions: [...new Set(permissions as ToolPermission[])],
      ...(typeof sha256 === 'string' && { sha256 }),
      ...(typeof granted_at === 'string' && { granted_at }),
    };
  }
  return { grants };
}

/** The declared permissions a grant covers for a tool whose source has `digest`. */
export function grantedFor(grant: Grant | undefined, declared: readonly ToolPermission[], digest: string | undefined): ToolPermission[] {
  if (!grant || (grant.sha256 !== undefined && grant.sha256 !== digest)) return [];
  return toolPermissions.filter((permission) => declared.includes(permission) && grant.permissions.includes(permission));
}

/** The host class of a set of permissions: tools share a host only with tools granted exactly the same. */
export function hostClass(permissions: readonly ToolPermission[]): string {
  return [...permissions].sort().join('+');
}

/**
 * Records (or, with an empty list, removes) the grant of one tool, written through a temp file and
 * a rename. Only write_tool calls this, after the person approved the call.
 */
export async function recordGrant(toolsDir: string, name: string, permissions: readonly ToolPermission[], code: string): Promise<void> {
  const { grants, problem } = await readGrants(toolsDir);
  if (problem !== undefined) {
    if (permissions.length === 0) return;
    throw new Error(`${permissionsFileName} in the tools folder cannot be read: ${problem}`);
  }
  if (permissions.length === 0) {
    if (!(name in grants)) return;
    delete grants[name];
  } else {
    grants[name] = { permissions: [...permissions], sha256: sourceDigest(code), granted_at: new Date().toISOString() };
  }
  await writeFileAtomically(path.join(toolsDir, permissionsFileName), `${JSON.stringify(grants, null, 2)}\n`, path.join(toolsDir, '.staging'));
}
