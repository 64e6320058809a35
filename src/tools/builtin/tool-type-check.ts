import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import { messageOf } from '../../failure.ts';

// Type-checking a user tool before write_tool installs it. `typescript` is a devDependency:
// where it is missing the check is skipped. Loading TypeScript and parsing its library files
// takes about a second of CPU, a check against them already parsed a few tens of milliseconds,
// so one worker, off the main thread, keeps them between checks and ends once idle.

export interface TypeCheck {
  /** At most `maxErrors` errors, each with its line. */
  errors: string[];
  /** "(and N more)" when errors were left out, else empty. */
  more: string;
  /** Why the check was skipped, when that is worth saying. */
  note?: string;
}

export interface ToolTypeCheckerOptions {
  /** Type errors shown at most; the rest are counted. */
  maxErrors: number;
  /** A check that takes longer is skipped and its worker ended. */
  timeoutMs: number;
  /** The worker ends after this long without a check, giving back its memory. */
  idleMs: number;
}

interface PendingCheck {
  resolve: (result: TypeCheck) => void;
  timer: NodeJS.Timeout;
}

interface WorkerAnswer {
  id: number;
  errors?: string[];
  total?: number;
  failed?: string;
}

let typescriptPath: string | null | undefined;

function findTypescript(): string | undefined {
  if (typescriptPath === undefined) {
    try {
      typescriptPath = createRequire(import.meta.url).resolve('typescript');
    } catch {
      typescriptPath = null;
    }
  }
  return typescriptPath ?? undefined;
}

const skipped = (why: string): TypeCheck => ({ errors: [], more: '', note: `The type check was skipped (${why}).` });

function checked(errors: string[], total: number): TypeCheck {
  return { errors, more: total > errors.length ? `\n(and ${total - errors.length} more)` : '' };
}

/**
 * Type-checks a module as a single file: no module resolution (imports are typed `any`),
 * ES2023 library without DOM, not strict. Only errors in the tool's own file count, and a
 * missing name that exists at run time in the host (fetch, Buffer, process…) is not an error.
 * Checks queue in one worker; a worker that fails, stops or times out fails only the checks
 * it held (skipped, with the reason), and the next check starts a new one.
 */
export class ToolTypeChecker {
  private worker: Worker | undefined;
  private readonly pending = new Map<number, PendingCheck>();
  private nextId = 0;
  private idleTimer: NodeJS.Timeout | undefined;
  /** How many workers this checker has started (tests show that checks share one). */
  workersStarted = 0;

  constructor(private readonly options: ToolTypeCheckerOptions) {}

  /** Whether a worker is up (between its first check and its end). */
  get running(): boolean {
    return this.worker !== undefined;
  }

  /** `fileName` is where the module will live: it names the file in TypeScript's view. */
  check(fileName: string, code: string): Promise<TypeCheck> {
    const typescript = findTypescript();
    if (!typescript) return Promise.resolve({ errors: [], more: '' });
    const worker = this.workerFor(typescript);
    const id = this.nextId++;
    clearTimeout(this.idleTimer);
    return new Promise((resolve) => {
      const timer = setTimeout(() => this.endWorker(worker, 'it took too long'), this.options.timeoutMs);
      this.pending.set(id, { resolve, timer });
      worker.postMessage({ id, fileName, code, maxErrors: this.options.maxErrors });
    });
  }

  /** Ends the worker now, skipping any check it holds. */
  async close(): Promise<void> {
    if (this.worker) await this.endWorker(this.worker, 'the checker was closed');
  }

  private workerFor(typescript: string): Worker {
    if (this.worker) return this.worker;
    const worker = new Worker(typeCheckWorkerSource, {
      eval: true,
      workerData: { typescriptPath: typescript },
      execArgv: [],
      resourceLimits: { maxOldGenerationSizeMb: 512 },
      stdout: false,
      stderr: false,
    });
    // A worker kept between checks must not keep the process alive.
    worker.unref();
    worker.on('message', (answer: WorkerAnswer) => this.answer(answer));
    worker.on('error', (error) => void this.endWorker(worker, messageOf(error)));
    worker.on('exit', () => void this.endWorker(worker, 'the checker stopped'));
    this.worker = worker;
    this.workersStarted += 1;
    return worker;
  }

  private answer(answer: WorkerAnswer): void {
    const pending = this.pending.get(answer.id);
    if (!pending) return;
    this.pending.delete(answer.id);
    clearTimeout(pending.timer);
    pending.resolve(answer.failed !== undefined ? skipped(answer.failed) : checked(answer.errors ?? [], answer.total ?? 0));
    if (this.pending.size === 0) {
      clearTimeout(this.idleTimer);
      this.idleTimer = setTimeout(() => void this.close(), this.options.idleMs).unref();
    }
  }

  private async endWorker(worker: Worker, why: string): Promise<void> {
    if (this.worker !== worker) return;
    this.worker = undefined;
    clearTimeout(this.idleTimer);
    for (const { resolve, timer } of this.pending.values()) {
      clearTimeout(timer);
      resolve(skipped(why));
    }
    this.pending.clear();
    worker.removeAllListeners();
    // An error on the way out has no one left to tell.
    worker.on('error', () => undefined);
    await worker.terminate();
  }
}

/** Runs in the worker (CommonJS, plain JavaScript: the worker has no TypeScript loader). */
const typeCheckWorkerSource = String.raw`
const { parentPort, workerData } = require('node:worker_threads');
const ts = require(workerData.typescriptPath);
const options = {
  noResolve: true,
  noEmit: true,
  strict: false,
  skipLibCheck: true,
  target: ts.ScriptTarget.ES2022,
  module: ts.ModuleKind.ESNext,
  moduleResolution: ts.ModuleResolutionKind.Bundler,
  lib: ['lib.es2023.d.ts'],
  types: [],
  allowImportingTsExtensions: true,
};
// The library files, parsed (and bound) once for every check: the options never change.
const libraryFiles = new Map();
// Globals of the tool host (a worker like this one), less those only an eval'd CommonJS script has.
const globals = new Set(Object.getOwnPropertyNames(globalThis));
for (const scriptOnly of ['require', 'module', 'exports', '__filename', '__dirname']) globals.delete(scriptOnly);
// Imports are not resolved here (the loader checks them): a missing module or a host global is no error.
const environmental = (diagnostic, text) => {
  if (diagnostic.code === 2307 || diagnostic.code === 2792 || diagnostic.code === 7016) return true;
  const missing = /^Cannot find (?:name|namespace) '([^']+)'/.exec(text);
  return missing !== null && (globals.has(missing[1]) || missing[1] === 'NodeJS');
};

function check(fileName, code, maxErrors) {
  const host = ts.createCompilerHost(options, true);
  const readSourceFile = host.getSourceFile.bind(host);
  host.getSourceFile = (file, language, ...rest) => {
    if (file === fileName) return ts.createSourceFile(file, code, language, true, ts.ScriptKind.TS);
    if (!libraryFiles.has(file)) libraryFiles.set(file, readSourceFile(file, language, ...rest));
    return libraryFiles.get(file);
  };
  host.writeFile = () => {};
  const program = ts.createProgram({ rootNames: [fileName], options, host });
  const source = program.getSourceFile(fileName);
  const lines = code.split(/\r?\n/);
  const errors = [];
  for (const diagnostic of [...program.getSyntacticDiagnostics(source), ...program.getSemanticDiagnostics(source)]) {
    if (diagnostic.file === undefined || diagnostic.file.fileName !== fileName || diagnostic.start === undefined) continue;
    if (diagnostic.category !== ts.DiagnosticCategory.Error) continue;
    // TypeScript's advice on changing the project setup ("Do you need to install...") does not apply here.
    const text = ts.flattenDiagnosticMessageText(diagnostic.messageText, ' ').replace(/ Do you need to (?:install|change) .*$/, '');
    if (environmental(diagnostic, text)) continue;
    const { line, character } = source.getLineAndCharacterOfPosition(diagnostic.start);
    const excerpt = (lines[line] || '').trim();
    errors.push('line ' + (line + 1) + ', column ' + (character + 1) + ': ' + text + (excerpt ? '\n    ' + excerpt : ''));
  }
  return { errors: errors.slice(0, maxErrors), total: errors.length };
}

parentPort.on('message', ({ id, fileName, code, maxErrors }) => {
  try {
    parentPort.postMessage({ id, ...check(fileName, code, maxErrors) });
  } catch (error) {
    parentPort.postMessage({ id, failed: error && error.message ? error.message : String(error) });
  }
});
`;
