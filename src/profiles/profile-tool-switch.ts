// A built-in tool turned on or off for a profile from the page (the documents_search switch): written into the
// person's copy of the profile under DATA_DIR/profiles, as its model is (profile-model.ts), never into the shipped file.
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type { Profile } from './profile.ts';
import { writeFileAtomically } from '../atomic-file.ts';

const unquoted = (item: string) => item.trim().replace(/^(['"])(.*)\1$/, '$2');

/**
 * The profile's text with `tool` listed in (or taken out of) its front matter's `tools`, the rest as the person wrote
 * it. Undefined when the list says `*` (every tool), which one tool cannot be taken out of.
 */
export function withTool(text: string, tool: string, on: boolean): string | undefined {
  const frontMatter = /^---\r?\n([\s\S]*?)\r?\n---/.exec(text);
  if (!frontMatter) throw new Error('the profile has no front matter');
  const lines = frontMatter[1]!.split(/\r?\n/);
  const start = lines.findIndex((line) => /^tools\s*:/.test(line));
  if (start < 0) {
    if (on) lines.push('tools:', `  - ${tool}`);
  } else {
    const inline = lines[start]!.replace(/^tools\s*:/, '').trim();
    if (inline.startsWith('[')) {
      const items = inline.replace(/^\[|\]$/g, '').split(',').map(unquoted).filter((item) => item !== '');
      if (items.includes('*')) return on ? text : undefined;
      const kept = items.filter((item) => item !== tool);
      lines[start] = `tools: [${(on ? [...kept, tool] : kept).join(', ')}]`;
    } else {
      let end = start + 1;
      while (end < lines.length && /^\s+-\s/.test(lines[end]!)) end += 1;
      const items = lines.slice(start + 1, end);
      if (items.some((line) => unquoted(line.replace(/^\s+-\s/, '')) === '*')) return on ? text : undefined;
      const kept = items.filter((line) => unquoted(line.replace(/^\s+-\s/, '')) !== tool);
      const indent = /^(\s+)-/.exec(items[0] ?? '')?.[1] ?? '  ';
      if (on) kept.push(`${indent}- ${tool}`);
      lines.splice(start, end - start, kept.length === 0 ? 'tools: []' : 'tools:', ...kept);
    }
  }
  return `---\n${lines.join('\n')}\n---${text.slice(frontMatter[0].length)}`;
}

/** Writes the profile's override file with `tool` on or off; false (nothing written) when its tools are `*`. */
export async function writeProfileTool(profile: Pick<Profile, 'file'>, overridesDirectory: string, tool: string, on: boolean): Promise<boolean> {
  const text = withTool(await readFile(profile.file, 'utf8'), tool, on);
  if (text === undefined) return false;
  await writeFileAtomically(path.join(overridesDirectory, path.basename(profile.file)), text);
  return true;
}
