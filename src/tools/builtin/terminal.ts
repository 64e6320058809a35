import { realpath, stat } from 'node:fs/promises';
import path from 'node:path';
import { Type, type Static } from '@sinclair/typebox';
import type { Config } from '../../config.ts';
import { jailedStartFailure, type Jail } from '../../jail/jail.ts';
import type { JailSpec } from '../../jail/jail-spec.ts';
import { ProcessMarkers } from '../process-markers.ts';
import { describeProcessResult, runProcess } from '../process-runner.ts';
import type { Tool } from '../tool.ts';
import { toolEnvironment } from '../tool-environment.ts';
import { argumentRules, findCommandRunner, forcedArguments, matchArgumentRule } from './command-policy.ts';
import { checkGitArguments, checkRepositoryConfig, gitSafetyArguments } from './git-policy.ts';
import { isInside, parseAllowedRoots, resolveAllowedPath, type AllowedRoots } from '../host-files/path-access.ts';
import { interpreterFolders } from '../../jail/interpreters.ts';
import { createPathPolicy } from '../host-files/path-policy.ts';
import { sessionWorkFolder } from '../host-files/work-folder.ts';
import { toolFailure } from '../../failure.ts';

const defaultTimeoutSeconds = 60;
const maximumTimeoutSeconds = 600;
const maximumOutputCharacters = 20_000;
const gitConfigTimeoutMs = 10_000;

const parameters = Type.Object(
  {
    command: Type.String({ description: 'Command line, e.g. "git status"' }),
    cwd: Type.Optional(Type.String({ description: 'Relative to the work folder' })),
    timeout_s: Type.Optional(Type.Number({ minimum: 1, maximum: maximumTimeoutSeconds, description: 'Seconds (default 60)' })),
  },
  { additionalProperties: false },
);

type TerminalArguments = Static<typeof parameters>;

const shellOperators = new Set(['|', '&', ';', '<', '>', '(', ')', '$', '`']);

/**
 * Splits a command line into words the way a shell would for plain words, quotes and
 * backslashes, and refuses everything a shell would do beyond that, rather than pass it on literally.
 */
export function splitCommandLine(command: string): { words: string[] } | { refusal: string } {
  const operatorRefusal = (found: string) => ({
    refusal:
      `Refused: ${found} needs a shell. Commands run without a shell here: one command per call, words separated by spaces, ` +
      `quoted with '…' or "…" or escaped with \\. Not available: | & ; < > ( ) $ \` and newlines ` +
      '(no pipes, redirection, chaining, variables or substitution).',
  });
  if (/[\r\n]/.test(command)) return operatorRefusal('a newline');
  const words: string[] = [];
  let current = '';
  let inWord = false;
  let quote: "'" | '"' | undefined;
  for (let index = 0; index < command.length; index++) {
    const character = command[index]!;
    if (quote === "'") {
      if (character === "'") quote = undefined;
      else current += character;
      continue;
    }
    if (quote === '"') {
      const next = command[index + 1] ?? '';
      if (character === '"') quote = undefined;
      else if (character === '\\' && next !== '' && '"\\$`'.includes(next)) current += command[++index];
      else if (character === '$' || character === '`') return operatorRefusal(`"${character}" inside double quotes`);
      else current += character;
      continue;
    }
    if (character === ' ' || character === '\t') {
      if (inWord) words.push(current);
      current = '';
      inWord = false;
      continue;
    }
    const startsWord = !inWord;
    inWord = true;
    if (character === "'" || character === '"') quote = character;
    else if (character === '\\') {
      if (index === command.length - 1) return { refusal: 'The command ends with a lone backslash; remove it or escape it as \\\\.' };
      current += command[++index];
    } else if (shellOperators.has(character)) return operatorRefusal(`"${character}"`);
    else if (character === '*' || character === '?') {
      return { refusal: `Refused: "${character}" is a wildcard, but no shell runs here to expand it. Name the files, or quote it ('*.txt') to pass it literally.` };
    } else if (character === '~' && startsWord) {
      return { refusal: 'Refused: "~" is not expanded, as no shell runs here. Write the full path instead.' };
    } else current += character;
  }
  if (quote) return { refusal: `The command has an unterminated ${quote === "'" ? 'single' : 'double'} quote.` };
  if (inWord) words.push(current);
  if (words.length === 0) return { refusal: 'The command is empty.' };
  return { words };
}

async function realFolder(folder: string): Promise<string | undefined> {
  try {
    return await realpath(folder);
  } catch {
    return undefined;
  }
}

/** A path to an executable passes only from a folder on PATH, so a script named like an allowed command does not. */
async function isOnSearchPath(executablePath: string): Promise<boolean> {
  const folder = await realFolder(path.dirname(executablePath));
  if (folder === undefined) return false;
  const searchFolders = (process.env.PATH ?? '').split(path.delimiter).filter((entry) => path.isAbsolute(entry));
  const realSearchFolders = await Promise.all(searchFolders.map(realFolder));
  return realSearchFolders.includes(folder);
}

async function resolveFolder(
  workFolder: string,
  requested: string | undefined,
  allowedRoots: AllowedRoots,
): Promise<{ folder: string } | { problem: string }> {
  const access = await resolveAllowedPath(requested ?? '.', { workFolder, allowedRoots });
  if (!access.ok) return { problem: `cwd: ${access.message}` };
  const folder = access.path;
  try {
    if ((await stat(folder)).isDirectory()) return { folder };
    return { problem: `cwd "${requested}" is a file, not a folder.` };
  } catch {
    return { problem: `cwd "${requested}" does not exist (resolved to ${folder}).` };
  }
}

function sentence(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

type Plan = { executable: string; args: string[] } | { refusal: string };

/** `killGraceMs`: between SIGTERM and SIGKILL when a call is stopped (runProcess's default, 2 s, when absent). */
export function createTerminalTool(options: { config: Config; jail: Jail; killGraceMs?: number }): Tool<TerminalArguments> {
  const { config, jail } = options;
  const entries = config.TERMINAL_ALLOWED_COMMANDS.split(',').map((entry) => entry.trim()).filter((entry) => entry !== '');
  const useShell = entries.includes('*');
  const listed = [...new Set(entries.map((entry) => path.basename(entry)))];
  // Command runners listed by mistake are refused anyway; the model is shown what really runs.
  const allowed = listed.filter((name) => findCommandRunner(name) === undefined);
  const allowedList = allowed.join(', ') || '(none)';
  const allowedRoots = parseAllowedRoots(config.FS_ALLOWED_PATHS);
  // The cwd goes through the path policy; a strict jail is shown only the grants inside none of Hearth's places.
  const paths = createPathPolicy({ config });
  const environment: NodeJS.ProcessEnv = {
    ...toolEnvironment(config.TOOL_ENV_PASSTHROUGH),
    // git in a session's folder must not find the repository Hearth itself may live in.
    GIT_CEILING_DIRECTORIES: path.resolve(config.SESSION_FILES_DIR),
  };
  // Shared by every tool process of this installation (code_exec's too): see process-markers.ts.
  const markers = new ProcessMarkers(config.DATA_DIR);

  /**
   * The profile's jail for the terminal: `host` sees the machine minus Hearth, `strict` only the
   * system, the work folder and the folders FS_ALLOWED_PATHS names (read-only).
   */
  function jailSpec(kind: JailSpec['kind'], workFolder: string, folder: string, grants: AllowedRoots): JailSpec {
    const readable = kind === 'strict' && grants !== 'anywhere' ? [...grants] : [];
    return { kind, writable: [workFolder], readable: [...readable, ...interpreterFolders()], cwd: folder };
  }

  function strictFolderProblem(workFolder: string, folder: string, grants: AllowedRoots): string | undefined {
    if (isInside(workFolder, folder)) return undefined;
    if (grants !== 'anywhere' && grants.some((root) => isInside(root, folder))) return undefined;
    return `cwd: ${folder} is outside what this profile's terminal sees (its strict jail shows the work folder and the folders FS_ALLOWED_PATHS lists). Work in the work folder.`;
  }

  async function checkGitRepository(executable: string, folder: string, signal: AbortSignal, marker: string, spec: JailSpec): Promise<string | undefined> {
    const listing = await runProcess({
      jail: { jail, spec },
      executable,
      args: ['config', '--list', '--show-scope', '-z'],
      cwd: folder,
      env: environment,
      marker,
      timeoutMs: gitConfigTimeoutMs,
      signal,
    });
    // A git that cannot start fails the same way when the command itself runs, with its own message.
    if (listing.spawnError || listing.aborted) return undefined;
    if (listing.exitCode !== 0) return `Refused: git cannot read this repository's configuration, so it is not run: ${listing.stderr.trim()}`;
    return checkRepositoryConfig(listing.stdout);
  }

  async function planCommand(command: string, folder: string, signal: AbortSignal, marker: string, spec: JailSpec): Promise<Plan> {
    if (useShell) return command.trim() === '' ? { refusal: 'The command is empty.' } : { executable: '/bin/sh', args: ['-c', command] };
    const split = splitCommandLine(command);
    if ('refusal' in split) return { refusal: `${split.refusal}\nAllowed executables: ${allowedList}.` };
    const [executable, ...args] = split.words as [string, ...string[]];
    const name = path.basename(executable);
    if (!listed.includes(name)) return { refusal: `Refused: "${name}" is not an allowed command. Allowed executables: ${allowedList}.` };
    const runner = findCommandRunner(name);
    if (runner) {
      return {
        refusal:
          `Refused: "${name}" is ${runner.what}, so it is never run from TERMINAL_ALLOWED_COMMANDS (the list names executables, and this one would run anything). ` +
          `Instead, ${runner.instead}.`,
      };
    }
    if (executable.includes('/') && !(await isOnSearchPath(path.resolve(folder, executable)))) {
      return { refusal: `Refused: ${executable} is not in a folder on PATH. Run the installed ${name} by its name.` };
    }
    for (const rule of argumentRules) {
      if (rule.command !== name) continue;
      const word = matchArgumentRule(rule, args);
      if (word !== undefined) return { refusal: `Refused: ${name} ${word} ${rule.what}. ${sentence(rule.instead)}.` };
    }
    if (name === 'git') {
      const refused = checkGitArguments(args) ?? (await checkGitRepository(executable, folder, signal, marker, spec));
      if (refused !== undefined) return { refusal: refused };
      return { executable, args: [...gitSafetyArguments, ...args] };
    }
    return { executable, args: [...(forcedArguments[name] ?? []), ...args] };
  }

  return {
    name: 'terminal',
    description: useShell
      ? 'Run a shell command (/bin/sh -c) in the session work folder; returns exit code, stdout and stderr.'
      : `Run a command in the session work folder; returns exit code, stdout and stderr. No shell (no pipes, redirects, $); allowed: ${allowedList}.`,
    parameters,
    subject: (args) => args.command,
    commandSubject: true,
    timeoutMs: (maximumTimeoutSeconds + 10) * 1000,
    async execute(args, context) {
      const jailRefusal = jail.refusal('The terminal');
      if (jailRefusal !== undefined) return toolFailure(jailRefusal);
      const workFolder = await sessionWorkFolder(config.SESSION_FILES_DIR, context);
      const resolved = await resolveFolder(workFolder, args.cwd, allowedRoots);
      if ('problem' in resolved) return toolFailure(resolved.problem);
      if (args.cwd !== undefined) {
        const decided = await paths.decide(args.cwd, 'list', context);
        if (!decided.ok) return toolFailure(`cwd: ${decided.message}`);
      }
      const kind = context.jailKinds?.terminal ?? 'strict';
      if (kind === 'strict' && jail.active) {
        const problem = strictFolderProblem(workFolder, resolved.folder, await paths.readGrants());
        if (problem !== undefined) return toolFailure(problem);
      }
      const spec = jailSpec(kind, workFolder, resolved.folder, await paths.readGrants());
      const marker = markers.forCall(context.sessionId);
      const plan = await planCommand(args.command, resolved.folder, context.signal, marker, spec);
      if ('refusal' in plan) return toolFailure(plan.refusal);
      const timeoutSeconds = Math.min(Math.max(args.timeout_s ?? defaultTimeoutSeconds, 1), maximumTimeoutSeconds);
      const result = await runProcess({
        ...plan,
        jail: { jail, spec },
        cwd: resolved.folder,
        env: environment,
        marker,
        timeoutMs: timeoutSeconds * 1000,
        signal: context.signal,
        maxOutputCharacters: maximumOutputCharacters,
        killGraceMs: options.killGraceMs,
      });
      if (result.spawnError?.code === 'ENOENT') return toolFailure(`Command not found: "${plan.executable}". Is it installed and on PATH?`);
      if (result.spawnError?.code === 'EACCES') return toolFailure(`Permission denied: "${plan.executable}" is not executable.`);
      if (result.spawnError) return toolFailure(`Could not start "${plan.executable}": ${result.spawnError.message}`);
      if (result.exitCode === 1 && jailedStartFailure(result.stderr) === 'ENOENT') {
        return toolFailure(`Command not found: "${plan.executable}". Is it installed and on PATH (inside the jail, the system folders)?`);
      }
      return describeProcessResult(result, timeoutSeconds);
    },
    // What a session's calls left running in the background (terminal and code_exec alike) ends with it, and everything at shutdown.
    releaseSession: async (sessionId) => void (await markers.endSession(sessionId)),
    dispose: async () => void (await markers.endStarted()),
  };
}
