import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseConfig, type Config } from '../../src/config.ts';
import { Jail, jailMachine, probeJail, writeTerminalInputFilter } from '../../src/jail/jail.ts';

/** The machine probed once for the whole test file: bubblewrap and pasta are there or not, with the terminal-input filter and control groups as Hearth uses them. */
const scratch = mkdtempSync(path.join(tmpdir(), 'hearth-jail-'));
process.once('exit', () => rmSync(scratch, { recursive: true, force: true }));
const filterFile = writeTerminalInputFilter(scratch);
const probed = await probeJail(process.env, filterFile);

const quiet = { warn: () => undefined, info: () => undefined };

/** The jail Hearth would build for this configuration (JAIL=off included). */
export function jailFor(config: Config): Jail {
  return new Jail({ config: inScratch(config), logger: quiet }, probed, jailMachine(probed, filterFile));
}

/** A tool's options with the jail for its configuration: `createTerminalTool(withJail(config))`. */
export function withJail(config: Config): { config: Config; jail: Jail } {
  return { config, jail: jailFor(config) };
}

const defaultDataDir = parseConfig({}).DATA_DIR;

/** A configuration that names no DATA_DIR keeps its jails' per-call /tmp folders in the temp folder, never in the checkout. */
export function inScratch(config: Config): Config {
  return config.DATA_DIR === defaultDataDir ? { ...config, DATA_DIR: scratch } : config;
}
