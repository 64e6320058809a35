import path from 'node:path';

/**
 * The XDG folders a Hearth started by a test reads instead of the person's: its `.env` fallback
 * (`$XDG_CONFIG_HOME/hearth/env`) and its default DATA_DIR (`$XDG_DATA_HOME/hearth`) are under `root`.
 */
export function testHomeFolders(root: string): { XDG_CONFIG_HOME: string; XDG_DATA_HOME: string } {
  return { XDG_CONFIG_HOME: path.join(root, 'xdg-config'), XDG_DATA_HOME: path.join(root, 'xdg-data') };
}
