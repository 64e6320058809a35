import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { McpServerConfig } from './mcp-config.ts';

type StdioConfig = Extract<McpServerConfig, { transport: 'stdio' }>;

/** npx's options that take a value as the next word. */
const optionsWithValue = new Set(['-p', '--package', '-c', '--call', '--node-options', '--registry', '--cache', '--userconfig']);
const preparationTimeoutMs = 5 * 60_000;
const lookupTimeoutMs = 30_000;
const outputKept = 4_000;

/**
 * The packages an `npx` entry runs (its `--package`s, else its first word that is no option), or
 * undefined for a command that is not npx.
 */
export function npxPackages(config: StdioConfig): string[] | undefined {
  if (path.basename(config.command) !== 'npx') return undefined;
  const packages: string[] = [];
  for (let index = 0; index < config.args.length; index += 1) {
    const word = config.args[index]!;
    if (word === '--') {
      if (packages.length === 0 && config.args[index + 1] !== undefined) packages.push(config.args[index + 1]!);
      break;
    }
    const [option, inlineValue] = word.startsWith('--') ? word.split(/=(.*)/s, 2) : [word, undefined];
    if (option === '-p' || option === '--package') {
      const value = inlineValue ?? config.args[++index];
      if (value !== undefined) packages.push(value);
    } else if (optionsWithValue.has(option!)) {
      if (inlineValue === undefined) index += 1;
    } else if (!word.startsWith('-')) {
      if (packages.length === 0) packages.push(word);
      break;
    }
  }
  return packages.length > 0 ? packages : undefined;
}

export interface NpxPreparationOptions {
  config: StdioConfig;
  packages: string[];
  /** Hearth's npm cache for MCP servers (mcpNpmCache). */
  npmCache: string;
  /** The environment npm runs with: the tool environment (PATH, HOME…), never Hearth's secrets. */
  environment: Record<string, string>;
  /** Told once npm starts fetching (not when the packages were prepared before). */
  onFetching?: () => void;
  signal?: AbortSignal;
}

/** `lasting`: the registry has no such package (npm's E404), which trying again will not change until the entry does. */
export type NpxPreparation = { prepared: true; registry: string } | { prepared: false; message: string; lasting?: boolean };

interface RunResult {
  code: number | null;
  output: string;
  error?: Error;
}

function run(executable: string, args: string[], environment: Record<string, string>, cwd: string, timeoutMs: number, signal?: AbortSignal): Promise<RunResult> {
  return new Promise((resolve) => {
    let output = '';
    const child = spawn(executable, args, { env: environment, cwd, stdio: ['ignore', 'pipe', 'pipe'], timeout: timeoutMs, ...(signal && { signal }) });
    const keep = (chunk: Buffer) => (output = (output + chunk.toString('utf8')).slice(-outputKept));
    child.stdout.on('data', keep);
    child.stderr.on('data', keep);
    child.once('error', (error) => resolve({ code: null, output, error }));
    child.once('close', (code) => resolve({ code, output }));
  });
}

/** What npm said went wrong, on one line: its first error lines, without the stack, codes and log path. */
function npmComplaint(text: string): string {
  const lines = text
    .split(/\r?\n/)
    .map((line) => line.replace(/^npm (error|ERR!) ?/, '').trim())
    .filter((line) => line !== '' && !/^(at |code |syscall |errno |[{}]|A complete log of this run|Log files were not written)/.test(line));
  const said = lines.slice(0, 2).join(' / ');
  return said.length > 400 ? `${said.slice(0, 400)}…` : said;
}

/** npm beside the entry's npx (an nvm installation), else the one on PATH. */
function npmOf(config: StdioConfig): string {
  if (!config.command.includes('/')) return 'npm';
  const sibling = path.join(path.dirname(config.command), 'npm');
  return existsSync(sibling) ? sibling : 'npm';
}

/** The file that says these packages were fetched from this registry into the cache. */
export function preparedMarker(npmCache: string, packages: readonly string[], registry: string): string {
  return path.join(npmCache, '_hearth', `prepared-${createHash('sha256').update(JSON.stringify({ packages, registry })).digest('hex').slice(0, 24)}.json`);
}

/**
 * Fetches an npx entry's packages into Hearth's npm cache, with network, outside the server's
 * jail, so that the jailed server (which has no network) starts from the cache alone. npm runs
 * with `ignore-scripts`: it downloads and unpacks, and nothing of the package runs outside the
 * jail (`npm exec` is given Node's absolute path to run, which no package's bin can shadow). Done
 * once per packages and registry: a marker in the cache remembers it. The answer names the
 * registry npm used, which the jailed npx must use too (it cannot read the person's .npmrc), as
 * npm's cache is keyed by URL.
 */
export async function prepareNpxPackages(options: NpxPreparationOptions): Promise<NpxPreparation> {
  const { config, packages, npmCache } = options;
  const environment = {
    ...options.environment,
    npm_config_cache: npmCache,
    npm_config_ignore_scripts: 'true',
    npm_config_update_notifier: 'false',
    npm_config_audit: 'false',
    npm_config_fund: 'false',
    npm_config_yes: 'true',
  };
  const npm = npmOf(config);
  await mkdir(npmCache, { recursive: true, mode: 0o700 });
  // In the cache, where no package.json is: a project around Hearth's working folder that has the package would be used instead of the cache.
  const lookup = await run(npm, ['config', 'get', 'registry'], environment, npmCache, lookupTimeoutMs, options.signal);
  if (lookup.code !== 0) return { prepared: false, message: `npm could not be asked for its registry: ${lookup.error?.message ?? npmComplaint(lookup.output)}` };
  const registry = lookup.output.trim().split(/\r?\n/).at(-1)!.trim();
  const marker = preparedMarker(npmCache, packages, registry);
  if (await readFile(marker).then(() => true, () => false)) return { prepared: true, registry };

  options.onFetching?.();
  const fetched = await run(
    npm,
    ['exec', '--yes', ...packages.map((name) => `--package=${name}`), '--', process.execPath, '--version'],
    environment,
    npmCache,
    preparationTimeoutMs,
    options.signal,
  );
  if (fetched.code !== 0) {
    const why = fetched.error?.message ?? npmComplaint(fetched.output);
    const lasting = /\bcode E404\b/.test(fetched.output);
    return { prepared: false, message: `npm could not fetch ${packages.join(', ')} into Hearth's npm cache from ${registry}${why ? `: ${why}` : ''}`, lasting };
  }
  await mkdir(path.dirname(marker), { recursive: true, mode: 0o700 });
  await writeFile(marker, `${JSON.stringify({ packages, registry, prepared_at: new Date().toISOString() })}\n`);
  return { prepared: true, registry };
}
