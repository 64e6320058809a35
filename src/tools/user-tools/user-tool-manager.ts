import { createHash, randomBytes } from 'node:crypto';
import { EventEmitter, setMaxListeners } from 'node:events';
import { readFile, rm } from 'node:fs/promises';
import path from 'node:path';
import type { ResourceLimits } from 'node:worker_threads';
import type { Logger } from '../../logger.ts';
import type { Db } from '../../store/database.ts';
import { sessionWorkFolder } from '../host-files/work-folder.ts';
import type { Tool, ToolContext, ToolResult } from '../tool.ts';
import { hearthInstance, processMarkerVariable } from '../process-markers.ts';
import type { Jail } from '../../jail/jail.ts';
import { toolEnvironment } from '../tool-environment.ts';
import type { ToolSource } from '../tool-registry.ts';
import { compileArgumentsValidator } from '../validation.ts';
import { buildToolFiles, buildToolSource, fingerprintToolsDir, listToolFiles } from './build-tools.ts';
import { HostPool, type HostStarter, type HostSummary } from './host-pool.ts';
import { HostProcess, type HostProcessOptions } from './host-process.ts';
import { grantedFor, hostClass, permissionsFileName, readGrants, sourceDigest } from './permissions.ts';
import type { LoadFailure, ModuleToLoad, ToolManifestEntry, ToolPermission } from './protocol.ts';
import { packageFolders, type Sandbox } from './sandbox.ts';
import { SessionLinks } from './session-links.ts';
import { runKvOperation } from './tool-kv.ts';
import { stopGraceMs, UserToolHost } from './user-tool-host.ts';

export interface UserToolManagerOptions {
  /** TOOLS_DIR: the person's and the agent's tools; write_tool, the switches and the grants write here. */
  toolsDir: string;
  /** SHIPPED_TOOLS_DIR: the tools that come with Hearth, read-only; one of the same name in `toolsDir` replaces one. */
  shippedToolsDir?: string;
  db: Db;
  /** The registry's `user` source, whose tools each reload replaces as a set. */
  source: ToolSource;
  /** USER_TOOL_TIMEOUT_MS: the wall-clock limit of one call. */
  timeoutMs: number;
  logger: Logger;
  resourceLimits?: ResourceLimits;
  /** How long importing one module may take; one that takes longer is left out until its file changes. */
  loadTimeoutMs?: number;
  /** SESSION_FILES_DIR: a session's host may read and write its folder there, and nothing else. TOOLS_DIR/.build/sessions when absent. */
  sessionFilesDir?: string;
  /** USER_TOOL_MAX_RSS_MB: a host whose resident memory passes this is ended (256 when absent). */
  maxRssMb?: number;
  /** TOOL_ENV_PASSTHROUGH: the variables the hosts see besides the harmless ones (toolEnvironment). */
  envPassthrough?: string;
  /** The strict jail every host runs in; without it (tests of the host alone), hosts run unjailed. */
  jail?: Jail;
  /** DATA_DIR: hosts carry this installation's process marker, so a host a crash left behind is ended at the next start. */
  dataDir?: string;
  /** Session hosts kept at most; the least recently used idle one is ended for a new one. */
  maxHosts?: number;
  /** A session host idle this long is ended. */
  idleMs?: number;
}

export interface ReloadReport {
  loaded: string[];
  errors: LoadFailure[];
}

export type Validation = { ok: true; tool: ToolManifestEntry } | { ok: false; message: string };

const defaultResourceLimits: ResourceLimits = { maxOldGenerationSizeMb: 128, maxYoungGenerationSizeMb: 16 };
/** How long importing one module may take when `loadTimeoutMs` is not given. */
export const defaultLoadTimeoutMs = 10_000;
const sessionIdPattern = /^[A-Za-z0-9_-]+$/;

/** One reload's tools: their bundles and, per tool, the permissions it runs with. */
interface Generation {
  outDir: string;
  /** The modules that loaded, with their declared and granted permissions. */
  modules: ModuleToLoad[];
  /** Tool name → the permissions it was granted (its host class). */
  grantsOf: Map<string, ToolPermission[]>;
  fileOf: Map<string, string>;
  /** Source file → the SHA-256 of its bundle (the tool with the helpers it imports): what a verdict is kept for. */
  digests: Map<string, string>;
}

/** Why a module failed to load, kept while its bundle stays the same so it is not loaded again. */
interface Verdict {
  digest: string;
  message: string;
}

/**
 * Loads the user tools of TOOLS_DIR and SHIPPED_TOOLS_DIR and keeps the registry in step with them. Each reload
 * bundles the tools into a new generation, loads them once in a host that may write nothing
 * to learn their names and schemas, swaps the registry's user tools at once and retires the
 * previous generation's hosts, so old module versions never pile up.
 *
 * Calls run in child processes under Node's permission model, one per session that calls user
 * tools (and per set of granted permissions), each of which may write only its session's folder:
 * the HostPool keeps them.
 */
export class UserToolManager extends EventEmitter<{ changed: [report: ReloadReport] }> {
  private generation: Generation | undefined;
  /** The current generation's session hosts. */
  private readonly pool: HostPool;
  private failures: LoadFailure[] = [];
  private reloading: Promise<ReloadReport> | undefined;
  private reloadQueued: Promise<ReloadReport> | undefined;
  private current: { fingerprint: string; report: ReloadReport } | undefined;
  /**
   * Source file → why its module failed to load (it threw, is not a tool, hung or crashed a host
   * while being imported). A module with a verdict is not loaded again, by a reload or by any
   * host, until its bundle changes (its file or a helper it imports is edited).
   */
  private readonly verdicts = new Map<string, Verdict>();
  private closed = false;
  /** Aborted by close: hosts still loading are ended instead of waited for. */
  private readonly closing = new AbortController();
  private readonly buildRoot: string;
  private readonly sessionFilesDir: string;
  /** Reloads, validations and the removals of retired generations still running: close waits for them. */
  private readonly inFlight = new Set<Promise<unknown>>();
  private readonly sessionLinks: SessionLinks;

  constructor(private readonly options: UserToolManagerOptions) {
    super();
    // Absolute: the hosts run in other working folders and import the bundles by path.
    this.buildRoot = path.resolve(options.toolsDir, '.build');
    this.sessionFilesDir = path.resolve(options.sessionFilesDir ?? path.join(this.buildRoot, 'sessions'));
    this.sessionLinks = new SessionLinks(this.sessionFilesDir);
    // Every host that is starting listens to it, and many sessions may start theirs at once.
    setMaxListeners(0, this.closing.signal);
    this.pool = new HostPool({
      logger: options.logger,
      ...(options.maxHosts !== undefined && { maxHosts: options.maxHosts }),
      ...(options.idleMs !== undefined && { idleMs: options.idleMs }),
    });
  }

  /** Files that failed to load at the last reload, and why. */
  errors(): LoadFailure[] {
    return this.failures;
  }

  /** The file a loaded user tool came from, relative to its folder (TOOLS_DIR or SHIPPED_TOOLS_DIR). */
  fileOf(name: string): string | undefined {
    const file = this.generation?.fileOf.get(name);
    return file === undefined ? undefined : this.shown(file);
  }

  /** A file as reports name it: relative to the tool folder holding it. */
  private shown(file: string): string {
    const { toolsDir, shippedToolsDir } = this.options;
    const inFolder = (folder: string | undefined) => (folder === undefined ? undefined : path.relative(folder, file));
    const relative = [inFolder(toolsDir), inFolder(shippedToolsDir)].find((candidate) => candidate !== undefined && candidate !== '' && !candidate.startsWith('..'));
    return relative ?? file;
  }

  /** How long importing one module may take before it is given up. */
  get loadTimeoutMs(): number {
    return this.options.loadTimeoutMs ?? defaultLoadTimeoutMs;
  }

  /**
   * The last reload's report once one has finished. Start-up does not wait for the user tools;
   * this waits for the first load (and starts one if none ever ran).
   */
  whenLoaded(): Promise<ReloadReport> {
    if (this.current) return Promise.resolve(this.current.report);
    return this.reloading ?? this.reload();
  }

  /** The session hosts of the current generation, least recently used first. */
  hosts(): HostSummary[] {
    return this.pool.summaries();
  }

  /**
   * Reloads; a reload asked for while one runs is done once more after it. Unless forced,
   * nothing happens when TOOLS_DIR holds exactly what the current generation loaded.
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

  /** Loads source that is not installed, in a throw-away host that may write nothing, and checks it is a usable tool named `name`. */
  validate(name: string, code: string): Promise<Validation> {
    return this.track(this.validateInHost(name, code));
  }

  private async validateInHost(name: string, code: string): Promise<Validation> {
    const refusal = this.jailRefusal();
    if (refusal !== undefined) return { ok: false, message: refusal };
    const outDir = this.freshBuildDir('check');
    try {
      const built = await buildToolSource(name, code, this.options.toolsDir, outDir);
      if (!built.ok) return { ok: false, message: `The code does not compile:\n${built.message}` };
      const host = await this.startHost([built.module], {});
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

  /** Ends the hosts of a deleted session. */
  async releaseSession(sessionId: string): Promise<void> {
    this.sessionLinks.forget(sessionId);
    await this.pool.release(sessionId);
  }

  /** Ends every host and waits for all work under way, so nothing writes to TOOLS_DIR/.build after it returns. */
  async close(): Promise<void> {
    this.closed = true;
    this.closing.abort();
    await this.pool.close();
    while (this.inFlight.size > 0) await Promise.allSettled([...this.inFlight]);
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
    const { toolsDir, shippedToolsDir } = this.options;
    const fingerprint = await fingerprintToolsDir(toolsDir, shippedToolsDir);
    if (!force && fingerprint === this.current?.fingerprint && this.generation) return this.current.report;
    const outDir = this.freshBuildDir('generation');
    const files = await listToolFiles(toolsDir, shippedToolsDir);
    const [{ modules, errors: buildErrors }, { grants, problem: grantsProblem }, digests] = await Promise.all([
      buildToolFiles(files, outDir),
      readGrants(toolsDir),
      Promise.all(files.map(async (file) => [file, sourceDigest(await readFile(file).catch(() => Buffer.alloc(0)))] as const)),
    ]);
    const bundleDigests = new Map(await Promise.all(modules.map(async (module) => [module.file, await fileDigest(module.modulePath)] as const)));
    // A verdict lasts while its module's bundle is the same: an edited (or removed) file is loaded afresh.
    for (const [file, verdict] of this.verdicts) if (bundleDigests.get(file) !== verdict.digest) this.verdicts.delete(file);
    const judged = modules.flatMap((module) => {
      const verdict = this.verdicts.get(module.file);
      return verdict ? [{ file: module.file, message: verdict.message }] : [];
    });
    const refusal = this.jailRefusal();
    if (refusal !== undefined) {
      // Kept as load errors, so GET /agents/tools and the page name each refused file and why.
      this.failures = files.map((file) => ({ file: this.shown(file), message: refusal }));
      const report = { loaded: [], errors: this.failures };
      this.current = { fingerprint, report };
      this.emit('changed', report);
      return report;
    }
    const toLoad = modules.filter((module) => !this.verdicts.has(module.file));
    // Loading them once, with no write access and no permission, gives their names, schemas and load errors.
    const manifestHost = toLoad.length === 0 ? { tools: [], errors: [], moduleFailures: [] } : await this.startHost(toLoad, {});
    if (manifestHost instanceof UserToolHost) await manifestHost.terminate('the tools were loaded');
    if (this.closed) return { loaded: [], errors: [] };
    this.remember(manifestHost.moduleFailures, bundleDigests);

    const digestOf = new Map(digests);
    const loadedFiles = new Map(manifestHost.tools.map((entry) => [entry.file, entry]));
    const generation: Generation = { outDir, modules: [], grantsOf: new Map(), fileOf: new Map(), digests: bundleDigests };
    for (const module of modules) {
      const entry = loadedFiles.get(module.file);
      if (!entry) continue;
      const granted = grantedFor(grants[entry.name], entry.permissions, digestOf.get(module.file));
      generation.modules.push({ ...module, declared: entry.permissions, granted });
      generation.grantsOf.set(entry.name, granted);
      generation.fileOf.set(entry.name, entry.file);
      const missing = entry.permissions.filter((permission) => !granted.includes(permission));
      if (missing.length > 0) {
        this.options.logger.info({ tool: entry.name, permissions: missing }, 'user tool declares permissions that are not granted; it runs without them');
      }
    }

    const refused = this.options.source.replace(manifestHost.tools.map((entry) => this.toolFor(entry, generation.grantsOf.get(entry.name) ?? [])));
    const grantsFailure = grantsProblem === undefined ? [] : [{ file: path.join(toolsDir, permissionsFileName), message: grantsProblem }];
    this.failures = [
      ...buildErrors,
      ...manifestHost.errors,
      ...judged,
      ...grantsFailure,
      ...refused.map(({ name, message }) => ({ file: generation.fileOf.get(name) ?? name, message })),
    ]
      .map(({ file, message }) => ({ file: this.shown(path.resolve(toolsDir, file)), message }))
      .sort((first, second) => first.file.localeCompare(second.file));

    const previous = this.generation;
    this.generation = generation;
    const classes = new Set([...generation.grantsOf.values()].map(hostClass));
    const retired = this.pool.renew(
      (permissions) => classes.has(hostClass(permissions)),
      (owner, permissions) => this.starterFor(generation, owner, permissions),
    );
    // Its bundles go once the hosts that import them have ended.
    if (previous) void this.track(retired.then(() => rm(previous.outDir, { recursive: true, force: true })));
    const refusedNames = new Set(refused.map(({ name }) => name));
    const report = { loaded: manifestHost.tools.map((entry) => entry.name).filter((name) => !refusedNames.has(name)), errors: this.failures };
    this.current = { fingerprint, report };
    this.emit('changed', report);
    return report;
  }

  /** Keeps the verdicts on modules that failed to load; answers whether any is new. */
  private remember(failures: LoadFailure[], digests: ReadonlyMap<string, string>): boolean {
    let added = false;
    for (const { file, message } of failures) {
      const digest = digests.get(file);
      if (digest === undefined || this.verdicts.get(file)?.digest === digest) continue;
      this.verdicts.set(file, { digest, message });
      added = true;
    }
    return added;
  }

  /** The verdict on a module of `generation`, when the module failed to load as it is there. */
  private verdictOn(generation: Generation, file: string): Verdict | undefined {
    const verdict = this.verdicts.get(file);
    return verdict !== undefined && verdict.digest === generation.digests.get(file) ? verdict : undefined;
  }

  /** Starts `owner`'s host for its tools of `generation` granted `permissions`, leaving out modules with a verdict. */
  private starterFor(generation: Generation, owner: string, permissions: ToolPermission[]): HostStarter {
    return async () => {
      const workFolder = await sessionWorkFolder(this.sessionFilesDir, { sessionId: owner });
      const modules = generation.modules.filter(
        (module) => hostClass(module.granted ?? []) === hostClass(permissions) && !this.verdictOn(generation, module.file),
      );
      const host = await this.startHost(modules, { workFolder, permissions });
      // A module that loaded for the loading host but failed in this one (it behaves otherwise in a
      // session's host) is left out of every later host; a reload takes it out of the tool set and the errors.
      if (!this.closed && this.remember(host.moduleFailures, generation.digests) && generation === this.generation) {
        void this.reload({ force: true }).catch((error: unknown) => this.options.logger.error({ err: error }, 'reloading the user tools failed'));
      }
      return host;
    };
  }

  private async startHost(modules: ModuleToLoad[], sandbox: Sandbox): Promise<UserToolHost> {
    const processOptions: HostProcessOptions = {
      resourceLimits: this.options.resourceLimits ?? defaultResourceLimits,
      // Bundles keep their package imports: the host reads the node_modules folders they resolve from.
      sandbox: { ...sandbox, read: [...(sandbox.read ?? []), ...(await packageFolders(this.buildRoot))] },
      environment: {
        ...toolEnvironment(this.options.envPassthrough ?? ''),
        ...(this.options.dataDir !== undefined && { [processMarkerVariable]: `${hearthInstance(this.options.dataDir)}:user-tools:host` }),
      },
      maxRssMb: this.options.maxRssMb ?? 256,
      ...(this.options.jail && { jail: this.options.jail }),
    };
    return UserToolHost.start({
      modules,
      kv: (tool, operation) => runKvOperation(this.options.db, tool, operation),
      loadTimeoutMs: this.loadTimeoutMs,
      signal: this.closing.signal,
      connect: (toLoad) => new HostProcess(processOptions, toLoad),
    });
  }

  private toolFor(entry: ToolManifestEntry, granted: readonly ToolPermission[]): Tool {
    // A tool granted network fetches what anyone may have written, and may send its arguments anywhere.
    const networked = granted.includes('network');
    return {
      name: entry.name,
      description: entry.description,
      parameters: entry.parameters,
      ...(networked && {
        untrustedSource: () => `user tool ${entry.name} (granted network)`,
        outflow: (args: Record<string, unknown>) => ({ request: Object.values(args).map((value) => (typeof value === 'string' ? value : JSON.stringify(value))) }),
      }),
      // The host enforces USER_TOOL_TIMEOUT_MS and ends stuck tools itself; this only backs it up.
      timeoutMs: this.options.timeoutMs + stopGraceMs + 2_000,
      execute: (args: Record<string, unknown>, context: ToolContext) => this.call(entry.name, args, context),
      releaseSession: (sessionId: string) => this.releaseSession(sessionId),
    };
  }

  private async call(name: string, args: Record<string, unknown>, context: ToolContext): Promise<ToolResult> {
    const refusal = this.jailRefusal();
    if (refusal !== undefined) return { output: refusal, success: false };
    const owner = context.parentSessionId ?? context.sessionId;
    if (!sessionIdPattern.test(owner)) return { output: `The user tool ${name} cannot run for session "${owner}".`, success: false };
    for (let attempt = 0; ; attempt++) {
      const generation = this.generation;
      const permissions = generation?.grantsOf.get(name);
      if (!generation || !permissions) return { output: `The user tool ${name} is not loaded.`, success: false };
      const verdict = this.verdictOn(generation, generation.fileOf.get(name)!);
      if (verdict) return { output: `The user tool ${name} did not load: ${verdict.message}`, success: false };
      const refusal = await this.sessionLinks.refusal(owner);
      if (refusal !== undefined) return { output: refusal, success: false };
      let host: UserToolHost;
      try {
        host = await this.pool.hostFor(owner, permissions, this.starterFor(generation, owner, permissions));
      } catch (error) {
        this.options.logger.error({ err: error, session: owner }, 'cannot start a user-tool host');
        return { output: `The user tool ${name} could not start: ${(error as Error).message}`, success: false };
      }
      // It ended before the call reached it (a reload retired it, or it crashed): once more, with the host there is now.
      // From here to host.call nothing awaits, so a reload's retirement sees this call in flight and waits for it.
      if (host.ended && attempt < 2) continue;
      if (!host.ended && !host.tools.some((tool) => tool.name === name)) {
        const file = generation.fileOf.get(name);
        const problem = host.errors.find((error) => error.file === file)?.message ?? 'it is missing from its host';
        return { output: `The user tool ${name} did not load for this session: ${problem}`, success: false };
      }
      return host.call(name, args, { sessionId: context.sessionId, signal: context.signal, timeoutMs: this.options.timeoutMs });
    }
  }

  /** Why no user tool may run here (the machine has no jail and JAIL=off is not set), if so. */
  private jailRefusal(): string | undefined {
    return this.options.jail?.refusal('User tools');
  }

  private freshBuildDir(kind: string): string {
    return path.join(this.buildRoot, `${kind}-${randomBytes(4).toString('hex')}`);
  }
}

async function fileDigest(file: string): Promise<string> {
  return createHash('sha256').update(await readFile(file)).digest('hex');
}
