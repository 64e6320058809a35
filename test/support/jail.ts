import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Config } from '../../src/config.ts';
import { Jail, jailMachine, probeJail, writeTerminalInputFilter } from '../../src/jail/jail.ts';

/** The machine probed once for the whole test file: bubblewrap and pasta are there or not, with the terminal-input filter and control groups as Hearth uses them. */
const filterFile = writeTerminalInputFilter(mkdtempSync(path.join(tmpdir(), 'hearth-jail-filter-')));
const probed = await probeJail(process.env, filterFile);

const quiet = { warn: () => undefined, info: () => undefined };

/** The jail Hearth would build for this configuration (JAIL=off included). */
export function jailFor(config: Config): Jail {
  return new Jail({ config, logger: quiet }, probed, jailMachine(probed, filterFile));
}

/** A tool's options with the jail for its configuration: `createTerminalTool(withJail(config))`. */
export function withJail(config: Config): { config: Config; jail: Jail } {
  return { config, jail: jailFor(config) };
}
