import type { Config } from '../../src/config.ts';
import { Jail, probeJail } from '../../src/jail/jail.ts';

/** The machine probed once for the whole test file: bubblewrap and pasta are there or not. */
const probed = await probeJail();

const quiet = { warn: () => undefined, info: () => undefined };

/** The jail Hearth would build for this configuration (JAIL=off included). */
export function jailFor(config: Config): Jail {
  return new Jail({ config, logger: quiet }, probed);
}

/** A tool's options with the jail for its configuration: `createTerminalTool(withJail(config))`. */
export function withJail(config: Config): { config: Config; jail: Jail } {
  return { config, jail: jailFor(config) };
}
