import { randomBytes } from 'node:crypto';
import { EventEmitter } from 'node:events';
import { readFile, rm } from 'node:fs/promises';
import path from 'node:path';
import type { ResourceLimits } from 'node:worker_threads';
import type { Logger } from '../../logger.ts';
import type { Db } from '../../store/database.ts';
import { kvDelete, kvGet, kvList, kvSet } from '../../store/user-tool-kv-repository.ts';
import type { Tool, ToolContext, ToolResult } from '../tool.ts';
import type { ToolRegistry } from '../tool-registry.ts';
import { compileArgumentsValidator } from '../validation.ts';
import { buildToolFiles, buildToolSource, fingerprintToolsDir, listToolFiles } from './build-tools.ts';
import type { KvOperation, LoadFailure, ModuleToLoad, ToolManifestEntry } from './protocol.ts';
import { stopGraceMs, UserToolHost } from './user-tool-host.ts';

export interface UserToolManagerOptions {
  toolsDir: string;
  db: Db;
  registry: ToolRegistry;
  /** USER_TOOL_TIMEOUT_MS: the wall-clock limit of one call. */
  timeoutMs: number;
  logger: Logger;
  resourceLimits?: ResourceLimits;
  loadTimeoutMs?: number;
}

export interface ReloadReport {
  loaded: string[];
  errors: LoadFailure[];
}

export type Validation = { ok: true; tool: ToolManifestEntry } | { ok: false; message: string };

const defaultResourceLimits: ResourceLimits = { maxOldGenerationSizeMb: 128, maxYoungGenerationSizeMb: 16, stackSizeMb: 4 };
/** How long a replaced host may finish its running calls. */
const retireWaitMs = 5_000;

/**
 * Loads the user tools of TOOLS_DIR into a worker host and keeps the registry in step with
 * it. Each reload builds a new host generation, swaps the registry's user tools at once and
 * retires the old host, so old module versions never pile up in the server.
 */
export class UserToolManager extends EventEmitter<{ changed: [report: ReloadReport] }> {
  private host: UserToolHost | undefined;
  private modules: ModuleToLoad[] = [];
  private failures: LoadFailure[] = [];
  private reloading: Promise<ReloadReport> | undefined;
  private reloadQueued: Promise<ReloadReport> | undefined;
  private replacing: Promise<UserToolHost | undefined> | undefined;
  private loaded: { fingerprint: string; report: ReloadReport } | undefined;
  private closed = false;
  private readonly buildRoot: string;
  /** Reloads, validations, retirements and replacements still running: close waits for them. */
  private readonly inFlight = new Set<Promise<unknown>>();
  private readonly retiring = new Set<UserToolHost>();

  constructor(private readonly options: UserToolManagerOptions) {
    super();
    this.buildRoot = path.join(options.toolsDir, '.build');
  }

  /** Files that failed to load at the last reload, and why. */
  errors(): LoadFailure[] {
    return this.failures;
  }

  /**
   * Reloads; a reload asked for while one runs is done once more after it. Unless forced,
   * nothing happens when TOOLS_DIR holds exactly what the running host loaded.
   */
  reload(options: { force?: boolean } = {}): Promise<ReloadReport> {
    if (!this.reloading) {
      this.reloading = this.track(this.load(options.force ?? false).finally(() => (this.reloading = undefined)));
      return this.reloading;
    }
    this.reloadQueued ??= this.track(
      this.reloading.then(() => {
        this.reloadQueued = undefined;
        return this.reload(options);
      }),
    );
    return this.reloadQueued;
  }

  /** Loads source that is not installed, in a throw-away host, and checks it is a usable tool named `name`. */
  validate(name: string, code: string): Promise<Validation> {
    return this.track(this.validateInHost(name, code));
  }

  private async validateInHost(name: string, code: string): Promise<Validation> {
    const outDir = this.freshBuildDir('check');
    try {
      const built = await buildToolSource(name, code, this.options.toolsDir, outDir);
      if (!built.ok) return { ok: false, message: `The code does not compile:\n${built.message}` };
      const host = await this.startHost([built.module]);
      await host.terminate('validation finished');
      const [problem] = host.errors;
      if (problem) return { ok: false, message: problem.message };
      const [tool] = host.tools;
      if (!tool) return { ok: false, message: 'The module loaded but exported no tool.' };
      try {
        compileArgumentsValidator(tool.parameters);
      } catch (error) {
        return { ok: false, message: `Its parameters are not a valid JSON Schema: ${(error as Error).message}` };
      }
      return { ok: true, tool };
    } finally {
      await rm(outDir, { recursive: true, force: true });
    }
  }

  /** Ends every host and waits for all work under way, so nothing writes to TOOLS_DIR/.build after it returns. */
  async close(): Promise<void> {
    this.closed = true;
    for (const host of this.retiring) await host.terminate('the server is shutting down');
    while (this.inFlight.size > 0) await Promise.allSettled([...this.inFlight]);
    await this.host?.terminate('the server is shutting down');
    await rm(this.buildRoot, { recursive: true, force: true });
  }

  private track<T>(work: Promise<T>): Promise<T> {
    this.inFlight.add(work);
    const forget = () => this.inFlight.delete(work);
    work.then(forget, forget);
    return work;
  }

  private async load(force: boolean): Promise<ReloadReport> {
    if (this.closed) return { loaded: [], errors: [] };
    const fingerprint = await fingerprintToolsDir(this.options.toolsDir);
    if (!force && fingerprint === this.loaded?.fingerprint && this.host && !this.host.ended) return this.loaded.report;
    const outDir = this.freshBuildDir('generation');
    const files = await listToolFiles(this.options.toolsDir);
    const { modules, errors: buildErrors } = await buildToolFiles(files, outDir);
    const host = await this.startHost(modules);
    if (this.closed) {
      await host.terminate('the server is shutting down');
      return { loaded: [], errors: [] };
    }
    const refused = this.options.registry.replaceUserTools(host.tools.map((entry) => this.toolFor(entry)), await this.enabledNames());
    const fileOf = new Map(host.tools.map((entry) => [entry.name, entry.file]));
    this.failures = [
      ...buildErrors,
      ...host.errors,
      ...refused.map(({ name, message }) => ({ file: fileOf.get(name) ?? name, message })),
    ]
      .map(({ file, message }) => ({ file: path.relative(this.options.toolsDir, file) || file, message }))
      .sort((first, second) => first.file.localeCompare(second.file));

    const previous = this.host;
    const previousModules = this.modules;
    this.host = host;
    this.modules = modules;
    this.watchForCrash(host);
    if (previous) void this.track(this.retire(previous, previousModules));
    const refusedNames = new Set(refused.map(({ name }) => name));
    const report = { loaded: host.tools.map((entry) => entry.name).filter((name) => !refusedNames.has(name)), errors: this.failures };
    this.loaded = { fingerprint, report };
    this.emit('changed', report);
    return report;
  }

  private async retire(host: UserToolHost, modules: ModuleToLoad[]): Promise<void> {
    this.retiring.add(host);
    await host.retire(retireWaitMs);
    this.retiring.delete(host);
    const folders = new Set(modules.map((module) => path.dirname(module.modulePath)));
    await Promise.all([...folders].map((folder) => rm(folder, { recursive: true, force: true })));
  }

  /**
   * A host that crashed or was ended for a stuck tool is replaced at once with the same
   * modules; calls that arrive meanwhile wait for the replacement.
   */
  private watchForCrash(host: UserToolHost): void {
    host.once('ended', (reason) => {
      if (this.closed || this.host !== host) return;
      this.options.logger.warn({ reason }, 'user-tool host ended; starting a new one');
      const started = this.startHost(this.modules).then(
        (replacement) => {
          if (this.closed || this.host !== host) {
            void this.track(replacement.terminate('superseded'));
            return undefined;
          }
          this.host = replacement;
          this.watchForCrash(replacement);
          return replacement;
        },
        (error: unknown) => {
          this.options.logger.error({ err: error }, 'cannot start a new user-tool host');
          return undefined;
        },
      );
      const replacing = this.track(started);
      this.replacing = replacing;
      void replacing.finally(() => {
        if (this.replacing === replacing) this.replacing = undefined;
      });
    });
  }

  private startHost(modules: ModuleToLoad[]): Promise<UserToolHost> {
    return UserToolHost.start({
      modules,
      resourceLimits: this.options.resourceLimits ?? defaultResourceLimits,
      kv: (tool, operation) => this.kv(tool, operation),
      loadTimeoutMs: this.options.loadTimeoutMs ?? 10_000,
    });
  }

  private toolFor(entry: ToolManifestEntry): Tool {
    return {
      name: entry.name,
      description: entry.description,
      parameters: entry.parameters,
      source: 'user',
      // The host enforces USER_TOOL_TIMEOUT_MS and ends stuck tools itself; this only backs it up.
      timeoutMs: this.options.timeoutMs + stopGraceMs + 2_000,
      execute: (args: Record<string, unknown>, context: ToolContext) => this.call(entry.name, args, context),
    };
  }

  private async call(name: string, args: Record<string, unknown>, context: ToolContext): Promise<ToolResult> {
    const host = this.host?.ended && this.replacing ? ((await this.replacing) ?? this.host) : this.host;
    if (!host) return { output: `The user tool ${name} is not loaded.`, success: false };
    return host.call(name, args, { sessionId: context.sessionId, signal: context.signal, timeoutMs: this.options.timeoutMs });
  }

  private kv(tool: string, operation: KvOperation): Promise<unknown> {
    const { db } = this.options;
    switch (operation.operation) {
      case 'get':
        return kvGet(db, tool, operation.key);
      case 'set':
        return kvSet(db, tool, operation.key, operation.value);
      case 'delete':
        return kvDelete(db, tool, operation.key);
      case 'list':
        return kvList(db, tool, operation.prefix);
    }
  }

  /** `enabled.json` in TOOLS_DIR: user tools that join every profile. */
  private async enabledNames(): Promise<string[]> {
    const file = path.join(this.options.toolsDir, 'enabled.json');
    try {
      const names: unknown = JSON.parse(await readFile(file, 'utf8'));
      if (Array.isArray(names)) return names.filter((name): name is string => typeof name === 'string');
      this.options.logger.warn({ file }, 'enabled.json is not a list of names; no user tool is enabled');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') this.options.logger.warn({ file, err: error }, 'cannot read enabled.json');
    }
    return [];
  }

  private freshBuildDir(kind: string): string {
    return path.join(this.buildRoot, `${kind}-${randomBytes(4).toString('hex')}`);
  }
}
