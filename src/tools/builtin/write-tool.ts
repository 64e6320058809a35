import { randomBytes } from 'node:crypto';
import { constants } from 'node:fs';
import { copyFile, mkdir, readdir, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { Type, type Static } from '@sinclair/typebox';
import type { JsonSchema, Tool, ToolContext, ToolOutput } from '../tool.ts';
import type { ToolRegistry } from '../tool-registry.ts';
import { declaredInSource, describePermissions, permissionsFileName, readGrants, recordGrant } from '../user-tools/permissions.ts';
import type { ToolPermission } from '../user-tools/protocol.ts';
import { readSwitchesFile, switchesFileName, type ToolSwitches } from '../user-tools/tool-switches.ts';
import type { ReloadReport, UserToolManager } from '../user-tools/user-tool-manager.ts';
import { managesHousehold } from '../../people/rights.ts';
import { conversationOf, type PersonReach } from './profile-reach.ts';
import { ToolTypeChecker } from './tool-type-check.ts';

const parameters = Type.Object(
  {
    name: Type.String({ description: 'e.g. convert_units; the code exports the same name' }),
    code: Type.String({ description: 'The whole TypeScript module' }),
    description: Type.Optional(Type.String({ description: 'Used if the code exports none' })),
  },
  { additionalProperties: false },
);

const toolNamePattern = /^[a-z][a-z0-9_]{1,63}$/;
const toolExtensions = ['.ts', '.mts', '.js', '.mjs'];
/** One checker for every app in the process: it keeps TypeScript's library parsed between checks. */
const typeChecker = new ToolTypeChecker({ maxErrors: 5, timeoutMs: 30_000, idleMs: 60_000 });

export interface WriteToolOptions {
  registry: ToolRegistry;
  toolsDir: string;
  /** The user-tool manager; created after the registry, so it is reached through a getter. */
  userTools: () => UserToolManager | undefined;
  /** The on/off switches: a tool written here is switched on. */
  toolSwitches: () => ToolSwitches | undefined;
  /** Whose conversation a call is in: a tool runs for the whole household, so only an owner's installs one. */
  reach?: Pick<PersonReach, 'sessions' | 'person'>;
}

/** Why the call's conversation may not install a tool: the household's tools are the owner's to manage. */
async function installRefusal(reach: WriteToolOptions['reach'], context: ToolContext): Promise<string | undefined> {
  if (!reach?.person) return undefined;
  const conversation = await conversationOf(reach, context);
  if (!conversation) return undefined;
  if (conversation.shared) return 'This session is shared with the household: tools are installed only from an owner\'s own session. Nothing was installed.';
  const person = await reach.person(conversation.personId);
  if (person && managesHousehold(person)) return undefined;
  return `Only an owner installs tools: a tool runs in everyone's sessions. ${person ? `${person.name} is ${person.role === 'adult' ? 'an' : 'a'} ${person.role}. ` : ''}Nothing was installed.`;
}

/**
 * write_tool: validates a user tool in a throw-away host (and type-checks it off the main
 * thread), then installs it atomically, keeps the previous version under `.history/`,
 * switches it on (in `enabled.json`) and reloads, so the model can call it in its next round.
 *
 * A module that declares `export const permissions = { childProcess?, worker? }` is always
 * put to the person first (mustAsk); only once the call runs, i.e. approved, are those
 * permissions recorded in `permissions.json`, which the sandboxed tools cannot write.
 */
export function createWriteToolTool(options: WriteToolOptions): Tool<Static<typeof parameters>> {
  const { registry, toolsDir } = options;
  let installing: Promise<unknown> = Promise.resolve();
  return {
    name: 'write_tool',
    description:
      'Create or replace one of your own tools (a TypeScript module) and load it. Read tool_manual write_tool first.',
    parameters,
    subject: (args) => String(args.name),
    outflow: () => ({ effect: 'a tool written now' }),
    mustAsk(args) {
      // The gate may ask before the arguments were validated: read them defensively.
      const description = typeof args.description === 'string' ? args.description : undefined;
      const declared = declaredInSource(withDescription(String(args.code ?? ''), description));
      if (declared.length === 0) return undefined;
      return `The tool ${String(args.name)} asks for permissions beyond the sandbox: ${describePermissions(declared)}. Approving installs it with them.`;
    },
    async execute(args, context): Promise<ToolOutput> {
      const notTheirs = await installRefusal(options.reach, context);
      if (notTheirs !== undefined) return refused(notTheirs);
      const manager = options.userTools();
      if (!manager) return refused('User tools are not available on this server.');
      const { name } = args;
      if (!toolNamePattern.test(name)) {
        return refused(
          `"${name}" is not a valid tool name. Use 2 to 64 characters: lowercase letters, digits and _, starting with a letter (e.g. convert_units). Nothing was installed.`,
        );
      }
      if (registry.isBuiltin(name)) return refused(`"${name}" is the name of a built-in tool; choose another name. Nothing was installed.`);
      if (args.code.trim() === '') return refused('The code is empty: send the whole module (see tool_manual write_tool). Nothing was installed.');
      const code = withDescription(args.code, args.description);

      const [validation, typeCheck] = await Promise.all([manager.validate(name, code), typeChecker.check(path.resolve(toolsDir, `${name}.ts`), code)]);
      const compiles = validation.ok || !validation.message.startsWith('The code does not compile');
      const problems = [
        ...(validation.ok ? [] : [validation.message]),
        // Type errors repeat a syntax error, but add to any other failure.
        ...(compiles && typeCheck.errors.length > 0
          ? [`The code has type errors:\n${typeCheck.errors.join('\n')}${typeCheck.more}\n(A value whose shape TypeScript cannot know may be declared \`: any\`.)`]
          : []),
      ];
      if (problems.length > 0) {
        return refused(
          `${name} was not installed. ${problems.join('\n')}\n` +
            'Fix this and call write_tool again with the whole module. Nothing was installed; any previous version is unchanged.',
        );
      }
      if (context.signal.aborted) return refused(`Stopped before ${name} was installed; nothing was changed.`);

      // The person approved what the text declares (mustAsk); the module must not ask for more when it runs.
      const approved = declaredInSource(code);
      const declared = validation.ok ? validation.tool.permissions : [];
      const unapproved = declared.filter((permission) => !approved.includes(permission));
      if (unapproved.length > 0) {
        return refused(
          `${name} was not installed: it declares the permissions ${unapproved.join(', ')} in a form that cannot be read before it runs. ` +
            `Declare them exactly as \`export const permissions = { ${unapproved.map((permission) => `${permission}: true`).join(', ')} };\` ` +
            'in the module itself, so the person can approve them. Nothing was installed.',
        );
      }

      const install = installing.then(() => installTool(toolsDir, name, code, declared, manager, options.toolSwitches()));
      installing = install.catch(() => undefined);
      const installed = await install;
      if (!installed.ok) return refused(installed.message);

      const { report, keptAs } = installed;
      const loaded = report.loaded.includes(name) ? registry.get(name)?.tool : undefined;
      if (!loaded) {
        const problem = report.errors.find((error) => path.parse(error.file).name === name);
        return refused(`${name}.ts was written but did not load: ${problem?.message ?? 'it is missing from the reloaded tools'}. Fix it with write_tool.`);
      }
      const others = report.errors.filter((error) => path.parse(error.file).name !== name);
      return [
        `Installed ${name} (${name}.ts) and loaded it: you can call ${name} now.`,
        `Description: ${loaded.description}`,
        `Parameters:\n${describeParameters(loaded.parameters)}`,
        keptAs ? `The previous version was kept as .history/${keptAs}.` : 'It is new: there was no previous version.',
        declared.length > 0 ? `It runs with the permissions the person approved: ${declared.join(', ')}.` : '',
        typeCheck.note ?? '',
        others.length > 0 ? `Note: ${others.length} other tool file(s) failed to load; reload_tools lists them.` : '',
      ]
        .filter((line) => line !== '')
        .join('\n');
    },
  };
}

function refused(output: string): ToolOutput {
  return { output, success: false };
}

/** A `description` argument becomes the module's export when the code has none of its own. */
function withDescription(code: string, description: string | undefined): string {
  if (description === undefined || description.trim() === '') return code;
  if (/\bexport\s+(?:const|let|var)\s+description\b|\bexport\s*\{[^}]*\bdescription\b/.test(code)) return code;
  return `${code.trimEnd()}\n\nexport const description = ${JSON.stringify(description.trim())};\n`;
}

type Installed =
  | { ok: true; report: ReloadReport; keptAs: string | undefined }
  | { ok: false; message: string };

/**
 * Writes the tool through `.staging/` and a rename, so a reader never sees half a file; copies
 * the version it replaces into `.history/`; switches it on; records the
 * permissions it was granted in `permissions.json` (or drops an earlier grant); reloads.
 */
async function installTool(
  toolsDir: string,
  name: string,
  code: string,
  permissions: readonly ToolPermission[],
  manager: UserToolManager,
  switches: ToolSwitches | undefined,
): Promise<Installed> {
  const switchesFile = await readSwitchesFile(toolsDir);
  if (!switchesFile.ok) return { ok: false, message: `${switchesFileName} in the tools folder ${switchesFile.message}; fix it first. Nothing was installed.` };
  if (permissions.length > 0) {
    const { problem } = await readGrants(toolsDir);
    if (problem !== undefined) return { ok: false, message: `${permissionsFileName} in the tools folder is malformed (${problem}); fix it first. Nothing was installed.` };
  }

  const stagingDir = path.join(toolsDir, '.staging');
  await mkdir(stagingDir, { recursive: true });
  const staged = path.join(stagingDir, `${name}.${randomBytes(6).toString('hex')}.ts`);
  try {
    await writeFile(staged, code);
    const previous = await existingVersions(toolsDir, name);
    let keptAs: string | undefined;
    for (const file of previous) keptAs = await keepInHistory(toolsDir, name, file);
    await rename(staged, path.join(toolsDir, `${name}.ts`));
    // The same tool under another extension (a hand-written .js) would now load twice.
    await Promise.all(previous.filter((file) => path.extname(file) !== '.ts').map((file) => rm(file, { force: true })));

    const switched = await switches?.set(name, true);
    if (switched && !switched.ok) return { ok: false, message: `${name}.ts was written but could not be switched on: ${switched.message}` };
    await recordGrant(toolsDir, name, permissions, code);
    return { ok: true, report: await manager.reload(), keptAs };
  } finally {
    await rm(staged, { force: true });
  }
}

/** The files in TOOLS_DIR that hold tool `name` now, under any tool extension. */
async function existingVersions(toolsDir: string, name: string): Promise<string[]> {
  const entries = await readdir(toolsDir, { withFileTypes: true });
  return entries
    .filter((entry) => entry.isFile() && toolExtensions.some((extension) => entry.name === `${name}${extension}`))
    .map((entry) => path.join(toolsDir, entry.name));
}

/** Copies a replaced version to `.history/<name>.<timestamp><ext>`; answers the file name it got. */
async function keepInHistory(toolsDir: string, name: string, file: string): Promise<string> {
  const historyDir = path.join(toolsDir, '.history');
  await mkdir(historyDir, { recursive: true });
  const stamp = new Date().toISOString().replaceAll(':', '-');
  for (let attempt = 0; ; attempt++) {
    const kept = `${name}.${stamp}${attempt === 0 ? '' : `-${attempt}`}${path.extname(file)}`;
    try {
      await copyFile(file, path.join(historyDir, kept), constants.COPYFILE_EXCL);
      return kept;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
  }
}

function describeParameters(schema: JsonSchema): string {
  const properties = (schema['properties'] ?? {}) as Record<string, JsonSchema>;
  const required = new Set((schema['required'] ?? []) as string[]);
  const lines = Object.entries(properties).map(([property, definition]) => {
    const type = Array.isArray(definition['enum']) ? `one of ${definition['enum'].join(', ')}` : String(definition['type'] ?? 'any');
    const description = typeof definition['description'] === 'string' ? `: ${definition['description']}` : '';
    return `- ${property} (${type}${required.has(property) ? ', required' : ''})${description}`;
  });
  return lines.length > 0 ? lines.join('\n') : '- none (call it with {})';
}

