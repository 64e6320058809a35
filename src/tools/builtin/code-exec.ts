import { randomUUID } from 'node:crypto';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { Type, type Static } from '@sinclair/typebox';
import type { Config } from '../../config.ts';
import { describeProcessResult, runProcess } from '../process-runner.ts';
import type { Tool } from '../tool.ts';
import { sessionWorkFolder } from './work-folder.ts';

const languages = ['javascript', 'python'] as const;
type Language = (typeof languages)[number];

const defaultTimeoutSeconds = 30;
const maximumTimeoutSeconds = 300;
const maximumOutputCharacters = 20_000;
/** Inside the work folder, so the code sees the session's files by relative path. */
export const codeExecFolderName = '.code-exec';

const parameters = Type.Object(
  {
    language: Type.Unsafe<Language>({ type: 'string', enum: [...languages] }),
    code: Type.String({ description: 'Program source; print what you need to see' }),
    timeout_s: Type.Optional(Type.Number({ minimum: 1, maximum: maximumTimeoutSeconds, description: 'Seconds (default 30)' })),
  },
  { additionalProperties: false },
);

type CodeExecArguments = Static<typeof parameters>;

export interface CodeExecOptions {
  config: Config;
  /** The Python interpreter to run; `python3` from PATH unless a test says otherwise. */
  pythonExecutable?: string;
}

export function createCodeExecTool(options: CodeExecOptions): Tool<CodeExecArguments> {
  const { config, pythonExecutable = 'python3' } = options;
  const interpreters: Record<Language, { executable: string; flags: string[]; extension: string }> = {
    javascript: { executable: process.execPath, flags: [], extension: 'mjs' },
    // Unbuffered, so output printed before a timeout or a stop is not lost with the process.
    python: { executable: pythonExecutable, flags: ['-u'], extension: 'py' },
  };

  return {
    name: 'code_exec',
    description: 'Run a JavaScript (Node.js, ES module) or Python 3 program in the session work folder; returns exit code, stdout and stderr.',
    parameters,
    source: 'builtin',
    timeoutMs: (maximumTimeoutSeconds + 10) * 1000,
    async execute(args, context) {
      const interpreter = interpreters[args.language];
      if (!interpreter) return { output: `Unknown language "${String(args.language)}"; use one of: ${languages.join(', ')}.`, success: false };
      const workFolder = await sessionWorkFolder(config.SESSION_FILES_DIR, context);
      const codeFolder = path.join(workFolder, codeExecFolderName);
      await mkdir(codeFolder, { recursive: true });
      const file = path.join(codeFolder, `${randomUUID()}.${interpreter.extension}`);
      const timeoutSeconds = Math.min(Math.max(args.timeout_s ?? defaultTimeoutSeconds, 1), maximumTimeoutSeconds);
      await writeFile(file, args.code);
      try {
        const result = await runProcess({
          executable: interpreter.executable,
          args: [...interpreter.flags, file],
          cwd: workFolder,
          timeoutMs: timeoutSeconds * 1000,
          signal: context.signal,
          maxOutputCharacters: maximumOutputCharacters,
        });
        if (result.spawnError?.code === 'ENOENT' && args.language === 'python') {
          return {
            output: 'python3 is not installed on this server, so Python code cannot run. JavaScript (Node.js) is available: send language "javascript".',
            success: false,
          };
        }
        if (result.spawnError) return { output: `Could not start ${interpreter.executable}: ${result.spawnError.message}`, success: false };
        return describeProcessResult(result, timeoutSeconds);
      } finally {
        await rm(file, { force: true });
      }
    },
  };
}
