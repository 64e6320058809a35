import { EventEmitter } from 'node:events';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type { Logger } from '../../logger.ts';
import type { ToolRegistry } from '../tool-registry.ts';
import type { LoadFailure } from './protocol.ts';
import { writeFileAtomically } from '../../atomic-file.ts';

export const switchesFileName = 'enabled.json';

/**
 * What `enabled.json` says. `{"disabled":[…]}` names the user and MCP tools switched off; every
 * other user tool is on. `"enabled":[…]` names the MCP tools switched on for every profile (an
 * MCP tool in neither list is offered only to the profiles that name it). The older format, a
 * list of enabled names, switched nothing off.
 */
export type SwitchesFile =
  | { ok: true; disabled: string[]; enabled: string[]; format: 'missing' | 'legacy' | 'switches' }
  | { ok: false; message: string };

export async function readSwitchesFile(toolsDir: string): Promise<SwitchesFile> {
  let text: string;
  try {
    text = await readFile(path.join(toolsDir, switchesFileName), 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { ok: true, disabled: [], enabled: [], format: 'missing' };
    return { ok: false, message: `cannot be read: ${(error as Error).message}` };
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    return { ok: false, message: `is not valid JSON: ${(error as Error).message}` };
  }
  if (Array.isArray(parsed)) return { ok: true, disabled: [], enabled: [], format: 'legacy' };
  const { disabled, enabled = [] } = typeof parsed === 'object' && parsed !== null ? (parsed as { disabled?: unknown; enabled?: unknown }) : {};
  const names = (value: unknown): value is string[] => Array.isArray(value) && value.every((name) => typeof name === 'string');
  if (names(disabled) && names(enabled)) return { ok: true, disabled, enabled, format: 'switches' };
  return { ok: false, message: 'must be {"disabled": ["tool_name", …], "enabled": ["mcp_tool_name", …]}' };
}

/** Writes `{"disabled":[…]}` through a rename, so a reader never sees half a file. */
async function writeSwitchesFile(toolsDir: string, disabled: Iterable<string>, enabled: Iterable<string>): Promise<void> {
  const switchedOn = [...new Set(enabled)].sort();
  await writeFileAtomically(
    path.join(toolsDir, switchesFileName),
    `${JSON.stringify({ disabled: [...new Set(disabled)].sort(), ...(switchedOn.length > 0 && { enabled: switchedOn }) }, null, 2)}\n`,
    path.join(toolsDir, '.staging'),
  );
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
  private enabled = new Set<string>();
  private problem: string | undefined;
  private writing: Promise<unknown> = Promise.resolve();

  constructor(private readonly options: { toolsDir: string; registry: ToolRegistry; logger: Logger }) {
    super();
    options.registry.setSwitch(
      (name) => this.isEnabled(name),
      (name) => this.isOnEverywhere(name),
    );
  }

  isEnabled(name: string): boolean {
    return this.problem === undefined && !this.disabled.has(name);
  }

  /** An MCP tool switched on for every profile (that takes MCP tools), as a user tool is. */
  isOnEverywhere(name: string): boolean {
    return this.isEnabled(name) && this.enabled.has(name);
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

  /**
   * Switches one tool on or off and records it; the older list format is rewritten in the new one.
   * `everywhere` (MCP tools): on also offers it to every profile, off takes it from every profile.
   */
  set(name: string, enabled: boolean, options: { everywhere?: boolean } = {}): Promise<SwitchOutcome> {
    const done = this.writing.then(() => this.write(name, enabled, options.everywhere ?? false));
    this.writing = done.catch(() => undefined);
    return done;
  }

  private async write(name: string, enabled: boolean, everywhere: boolean): Promise<SwitchOutcome> {
    const current = await readSwitchesFile(this.options.toolsDir);
    if (!current.ok) {
      this.apply(current);
      return { ok: false, message: `${switchesFileName} in the tools folder ${current.message}; fix it first.` };
    }
    const disabled = new Set(current.disabled);
    const switchedOn = new Set(current.enabled);
    if (enabled) disabled.delete(name);
    else disabled.add(name);
    if (enabled && everywhere) switchedOn.add(name);
    else switchedOn.delete(name);
    const unchanged = current.format !== 'legacy' && current.disabled.includes(name) !== enabled && current.enabled.includes(name) === switchedOn.has(name);
    if (!unchanged) await writeSwitchesFile(this.options.toolsDir, disabled, switchedOn);
    this.apply({ ok: true, disabled: [...disabled], enabled: [...switchedOn], format: 'switches' });
    return { ok: true };
  }

  private apply(file: SwitchesFile): void {
    const problem = file.ok ? undefined : file.message;
    const disabled = new Set(file.ok ? file.disabled : []);
    const enabled = new Set(file.ok ? file.enabled : []);
    const sameSet = (next: Set<string>, previous: Set<string>) => next.size === previous.size && [...next].every((name) => previous.has(name));
    const same = problem === this.problem && sameSet(disabled, this.disabled) && sameSet(enabled, this.enabled);
    this.problem = problem;
    this.disabled = disabled;
    this.enabled = enabled;
    if (problem !== undefined) this.options.logger.warn({ file: switchesFileName }, `${switchesFileName} ${problem}`);
    if (!same) this.emit('changed');
  }
}
