// A profile's model chosen from the page: written into the person's copy of the profile under
// DATA_DIR/profiles (made from the shipped file the first time), never into the shipped file.
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type { Profile } from './profile.ts';
import { writeFileAtomically } from '../atomic-file.ts';

/** The profile's text with `model:` set in its front matter, the rest as the person wrote it. */
export function withModel(text: string, model: string): string {
  const frontMatter = /^---\r?\n([\s\S]*?)\r?\n---/.exec(text);
  if (!frontMatter) throw new Error('the profile has no front matter');
  const line = `model: ${JSON.stringify(model)}`;
  const lines = frontMatter[1]!.split(/\r?\n/);
  const existing = lines.findIndex((entry) => /^model\s*:/.test(entry));
  if (existing >= 0) lines[existing] = line;
  else lines.splice(Math.max(1, lines.findIndex((entry) => /^id\s*:/.test(entry)) + 1), 0, line);
  return `---\n${lines.join('\n')}\n---${text.slice(frontMatter[0].length)}`;
}

/** Writes the profile's override file with `model` set, through a rename so the watcher never reads half of it. */
export async function writeProfileModel(profile: Pick<Profile, 'file'>, overridesDirectory: string, model: string): Promise<void> {
  const text = withModel(await readFile(profile.file, 'utf8'), model);
  await writeFileAtomically(path.join(overridesDirectory, path.basename(profile.file)), text);
}
