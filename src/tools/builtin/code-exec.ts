import { randomUUID } from 'node:crypto';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { Type, type Static } from '@sinclair/typebox';
import type { Config } from '../../config.ts';
import { interpreterFolders, pythonInstallation } from '../../jail/interpreters.ts';
import type { Jail } from '../../jail/jail.ts';
import { ProcessMarkers } from '../process-markers.ts';
import { describeProcessResult, runProcess } from '../process-runner.ts';
import type { Tool } from '../tool.ts';
import { toolEnvironment } from '../tool-environment.ts';
import { linksLeavingFolder, nodePermissionArguments, pythonGuardArguments, type SandboxPolicy } from './code-sandbox.ts';
import { createPathPolicy } from '../host-files/path-policy.ts';
import { sessionWorkFolder } from '../host-files/work-folder.ts';
import { toolFailure } from '../../failure.ts';

const languages = ['javascript', 'python'] as const;
type Language = (typeof languages)[number];

const defaultTimeoutSeconds = 30;
const maximumTimeoutSeconds = 300;
const maximumOutputCharacters = 20_000;
const maximumSubjectCodeCharacters = 80;
/** Inside the work folder, so the code sees the session's files by relative path. */
export const codeExecFolderName = '.code-exec';

const parameters = Type.Object(
  {
    language: Type.Unsafe<Language>({ type: 'string', enum: [...languages] }),
    code: Type.String({ description: 'Print what you need to see' }),
    timeout_s: Type.Optional(Type.Number({ minimum: 1, maximum: maximumTimeoutSeconds, description: 'Seconds (default 30)' })),
  },
  { additionalProperties: false },
);

type CodeExecArguments = Static<typeof parameters>;

export interface CodeExecOptions {
  config: Config;
  /** The strict jail every program runs in. */
  jail: Jail;
  /** The Python interpreter to run; `python3` from PATH unless a test says otherwise. */
  pythonExecutable?: string;
}

interface Interpreter {
  executable: string;
  /** The name TERMINAL_ALLOWED_COMMANDS must list for the language to run when it is a list. */
  command: string;
  extension: string;
  arguments(policy: SandboxPolicy, programFile: string): Promise<string[]>;
  /** The interpreter's real executable and the folders outside the system a jail must show for it. */
  installation(): Promise<{ executable: string; folders: string[] } | undefined>;
}

/** `<language> <first line of code>`, the line approval rules match (`code_exec(python *)`). */
export function codeExecSubject(args: Pick<CodeExecArguments, 'language' | 'code'>): string {
  const firstLine = String(args.code ?? '').split('\n').map((line) => line.trim()).find((line) => line !== '') ?? '';
  const head = firstLine.length > maximumSubjectCodeCharacters ? `${firstLine.slice(0, maximumSubjectCodeCharacters)}…` : firstLine;
  return `${String(args.language)} ${head}`.trim();
}

/**
 * Runs a program under the same policy as the terminal: it reads the work folder and
 * FS_ALLOWED_PATHS, writes only the work folder, starts no processes and sees only the
 * scrubbed environment. JavaScript is held by Node's permission model; Python by an audit
 * hook, a best-effort guard (see code-exec-guard.py and docs/security.md).
 */
export function createCodeExecTool(options: CodeExecOptions): Tool<CodeExecArguments> {
  const { config, jail, pythonExecutable = 'python3' } = options;
  const allowedCommands = config.TERMINAL_ALLOWED_COMMANDS.split(',').map((entry) => path.basename(entry.trim())).filter((entry) => entry !== '');
  const anyCommand = allowedCommands.includes('*');
  // FS_ALLOWED_PATHS less any folder holding or inside one of Hearth's places: never bound into the jail.
  const paths = createPathPolicy({ config });
  // The terminal tool ends a deleted session's marked processes, these included.
  const markers = new ProcessMarkers(config.DATA_DIR);
  const interpreters: Record<Language, Interpreter> = {
    javascript: {
      executable: process.execPath,
      command: 'node',
      extension: 'mjs',
      arguments: async (policy, programFile) => [...(await nodePermissionArguments(policy)), programFile],
      installation: async () => ({ executable: process.execPath, folders: interpreterFolders() }),
    },
    python: {
      executable: pythonExecutable,
      command: 'python3',
      extension: 'py',
      arguments: (policy, programFile) => pythonGuardArguments(policy, programFile),
      installation: () => pythonInstallation(pythonExecutable),
    },
  };

  async function refusalForLinks(workFolder: string, signal: AbortSignal): Promise<string | undefined> {
    let leaving: { link: string; target: string }[];
    try {
      leaving = await linksLeavingFolder(workFolder, signal);
    } catch (error) {
      return `code_exec cannot run JavaScript now: ${(error as Error).message}.`;
    }
    if (leaving.length === 0) return undefined;
    const shown = leaving.slice(0, 5).map(({ link, target }) => `${link} -> ${target}`).join(', ');
    const more = leaving.length > 5 ? ` and ${leaving.length - 5} more` : '';
    return (
      `Refused: the work folder holds symbolic links that lead outside it (${shown}${more}). A program would follow them, ` +
      'so JavaScript does not run while they exist. Delete them with the filesystem tool (action "delete" removes the link only), ' +
      'or ask the person if they are needed.'
    );
  }

  return {
    name: 'code_exec',
    description: 'Run JavaScript (Node.js ESM) or Python 3 in the session work folder; returns exit code, stdout, stderr.',
    parameters,
    subject: codeExecSubject,
    commandSubject: true,
    timeoutMs: (maximumTimeoutSeconds + 10) * 1000,
    async execute(args, context) {
      const interpreter = Object.hasOwn(interpreters, args.language) ? interpreters[args.language] : undefined;
      if (!interpreter) return toolFailure(`Unknown language "${String(args.language)}"; use one of: ${languages.join(', ')}.`);
      if (!anyCommand && !allowedCommands.includes(interpreter.command)) {
        return toolFailure(
          `Refused: ${args.language} runs with ${interpreter.command}, which TERMINAL_ALLOWED_COMMANDS does not list ` +
            `(allowed: ${allowedCommands.join(', ') || 'none'}), so code_exec does not run ${args.language} here. ` +
            `Use the allowed terminal commands instead, or ask the person to add ${interpreter.command} to TERMINAL_ALLOWED_COMMANDS.`,
        );
      }
      const refusal = jail.refusal('code_exec');
      if (refusal !== undefined) return toolFailure(refusal);
      const installation = await interpreter.installation();
      if (installation === undefined && args.language === 'python') {
        return toolFailure('python3 is not installed on this server, so Python code cannot run. JavaScript (Node.js) is available: send language "javascript".');
      }
      const workFolder = await sessionWorkFolder(config.SESSION_FILES_DIR, context);
      if (args.language === 'javascript') {
        const refusal = await refusalForLinks(workFolder, context.signal);
        if (refusal !== undefined) return toolFailure(refusal);
      }
      const codeFolder = path.join(workFolder, codeExecFolderName);
      const callId = randomUUID();
      const temporaryFolder = path.join(codeFolder, `tmp-${callId}`);
      await mkdir(temporaryFolder, { recursive: true });
      const file = path.join(codeFolder, `${callId}.${interpreter.extension}`);
      const timeoutSeconds = Math.min(Math.max(args.timeout_s ?? defaultTimeoutSeconds, 1), maximumTimeoutSeconds);
      try {
        await writeFile(file, args.code);
        const readRoots = await paths.readGrants();
        const readable = [...(readRoots === 'anywhere' ? [] : readRoots), ...(installation?.folders ?? [])];
        const result = await runProcess({
          jail: { jail, spec: { kind: 'strict', writable: [workFolder], readable, cwd: workFolder } },
          executable: installation?.executable ?? interpreter.executable,
          args: await interpreter.arguments({ readRoots, workFolder }, file),
          cwd: workFolder,
          env: { ...toolEnvironment(config.TOOL_ENV_PASSTHROUGH), TMPDIR: temporaryFolder },
          marker: markers.forCall(context.sessionId),
          timeoutMs: timeoutSeconds * 1000,
          signal: context.signal,
          maxOutputCharacters: maximumOutputCharacters,
        });
        if (result.spawnError?.code === 'ENOENT' && args.language === 'python') {
          return toolFailure('python3 is not installed on this server, so Python code cannot run. JavaScript (Node.js) is available: send language "javascript".');
        }
        if (result.spawnError) return toolFailure(`Could not start ${interpreter.executable}: ${result.spawnError.message}`);
        return describeProcessResult(result, timeoutSeconds);
      } finally {
        await rm(file, { force: true });
        await rm(temporaryFolder, { recursive: true, force: true });
      }
    },
  };
}
