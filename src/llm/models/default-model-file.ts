// The default model chosen from the page, per backend, in DATA_DIR/models.json: one small value
// read once at start and written when the owner picks another, so a JSON file (backed up with
// DATA_DIR's other files) rather than a table and its migration.
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type { BackendId } from '../../backend-ids.ts';
import { writeFileAtomically } from '../../atomic-file.ts';

export const modelsFileName = 'models.json';

type DefaultModels = Partial<Record<BackendId, string>>;

/** The chosen default models; a missing or unreadable file chooses none (the configuration's stands). */
export async function readDefaultModels(dataDir: string): Promise<DefaultModels> {
  let text: string;
  try {
    text = await readFile(path.join(dataDir, modelsFileName), 'utf8');
  } catch {
    return {};
  }
  try {
    const parsed = JSON.parse(text) as { default_models?: unknown };
    const chosen = parsed.default_models;
    if (typeof chosen !== 'object' || chosen === null) return {};
    return Object.fromEntries(Object.entries(chosen).filter(([, model]) => typeof model === 'string' && model !== '')) as DefaultModels;
  } catch {
    return {};
  }
}

/** Writes the file through a rename, so a reader never sees half of it. */
export async function writeDefaultModel(dataDir: string, backend: BackendId, model: string): Promise<void> {
  const chosen = { ...(await readDefaultModels(dataDir)), [backend]: model };
  await writeFileAtomically(path.join(dataDir, modelsFileName), `${JSON.stringify({ default_models: chosen }, null, 2)}\n`);
}
