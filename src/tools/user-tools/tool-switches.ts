import { randomBytes } from 'node:crypto';
import { EventEmitter } from 'node:events';
import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Logger } from '../../logger.ts';
import type { ToolRegistry } from '../tool-registry.ts';
import type { LoadFailure } from './protocol.ts';

export const switchesFileName = 'enabled.json';

/**
 * What `enabled.json` says. `{"disabled":[…]}` names the user tools switched off; every other
 * user tool is on. The older format, a list of enabled names, switched nothing off.
 */
export type SwitchesFile =
  | { ok: true; disabled: string[]; format: 'missing' | 'legacy' | 'switches' }
  | { ok: false; message: string };

export async function readSwitchesFile(toolsDir: string): Promise<SwitchesFile> {
  let text: string;
  try {
    text = await readFile(path.join(toolsDir, switchesFileName), 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { ok: true, disabled: [], format: 'missing' };
    return { ok: false, message: `cannot be read: ${(error as Error).message}` };
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    return { ok: false, message: `is not valid JSON: ${(error as Error).message}` };
  }
  if (Array.isArray(parsed)) return { ok: true, disabled: [], format: 'legacy' };
  const disabled = typeof parsed === 'object' && parsed !== null ? (parsed as { disabled?: unknown }).disabled : undefined;
  if (Array.isArray(disabled) && disabled.every((name) => typeof name === 'string')) return { ok: true, disabled, format: 'switches' };
  return { ok: false, message: 'must be {"disabled": ["tool_name", …]}' };
}

/** Writes `{"disabled":[…]}` through a rename, so a reader never sees half a file. */
async function writeSwitchesFile(toolsDir: string, disabled: Iterable<string>): Promise<void> {
  const stagingDir = path.join(toolsDir, '.staging');
  await mkdir(stagingDir, { recursive: true });
  const staged = path.join(stagingDir, `enabled.${randomBytes(6).toString('hex')}.json`);
  try {
    await writeFile(staged, `${JSON.stringify({ disabled: [...new Set(disabled)].sort() }, null, 2)}\n`);
    await rename(staged, path.join(toolsDir, switchesFileName));
  } finally {
    await rm(staged, { force: true });
  }
}

export type SwitchOutcome = { ok: true } | { ok: false; message: string };

/**
 * The on/off switches of the user tools, kept in TOOLS_DIR/enabled.json. A user tool is on
 * unless switched off: one dropped into the folder by hand is meant to be used. While the file
 * is malformed every user tool counts as off (one the person switched off must not run by
 * mistake) and the problem is reported with the load errors.
 */
export class ToolSwitches extends EventEmitter<{ changed: [] }> {
  private disabled = new Set<string>();
  private problem: string | undefined;
  private writing: Promise<unknown> = Promise.resolve();

  constructor(private readonly options: { toolsDir: string; registry: ToolRegistry; logger: Logger }) {
    super();
    options.registry.setSwitch((name) => this.isEnabled(name));
  }

  isEnabled(name: string): boolean {
    return this.problem === undefined && !this.disabled.has(name);
  }

  errors(): LoadFailure[] {
    return this.problem === undefined
      ? []
      : [{ file: switchesFileName, message: `${this.problem}; every user tool is off until it is fixed.` }];
  }

  /** Reads the file again; announces `changed` when what is switched off changed. */
  async reload(): Promise<void> {
    this.apply(await readSwitchesFile(this.options.toolsDir));
  }

  /** Switches one tool on or off and records it; the older list format is rewritten in the new one. */
  set(name: string, enabled: boolean): Promise<SwitchOutcome> {
    const done = this.writing.then(() => this.write(name, enabled));
    this.writing = done.catch(() => undefined);
    return done;
  }

  private async write(name: string, enabled: boolean): Promise<SwitchOutcome> {
    const current = await readSwitchesFile(this.options.toolsDir);
    if (!current.ok) {
      this.apply(current);
      return { ok: false, message: `${switchesFileName} in the tools folder ${current.message}; fix it first.` };
    }
    const disabled = new Set(current.disabled);
    if (enabled) disabled.delete(name);
    else disabled.add(name);
    const unchanged = current.format !== 'legacy' && current.disabled.includes(name) !== enabled;
    if (!unchanged) await writeSwitchesFile(this.options.toolsDir, disabled);
    this.apply({ ok: true, disabled: [...disabled], format: 'switches' });
    return { ok: true };
  }

  private apply(file: SwitchesFile): void {
    const problem = file.ok ? undefined : file.message;
    const disabled = new Set(file.ok ? file.disabled : []);
    const same = problem === this.problem && disabled.size === this.disabled.size && [...disabled].every((name) => this.disabled.has(name));
    this.problem = problem;
    this.disabled = disabled;
    if (problem !== undefined) this.options.logger.warn({ file: switchesFileName }, `${switchesFileName} ${problem}`);
    if (!same) this.emit('changed');
  }
}
