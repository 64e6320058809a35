import { Type, type Static } from '@sinclair/typebox';
import type { Db } from '../../store/database.ts';
import {
  appendSection,
  clearSections,
  readAllSections,
  readSection,
  writeSection,
  type ScratchpadSection,
} from '../../store/scratchpad-repository.ts';
import type { Tool, ToolContext } from '../tool.ts';
import { toolFailure } from '../../failure.ts';

const actions = ['write', 'append', 'read', 'clear', 'list'] as const;
type Action = (typeof actions)[number];

const maximumSectionLength = 64;

const parameters = Type.Object(
  {
    action: Type.Unsafe<Action>({ type: 'string', enum: [...actions] }),
    section: Type.Optional(Type.String({ description: 'Omit to read or clear all' })),
    content: Type.Optional(Type.String({ description: 'Text for write/append' })),
  },
  { additionalProperties: false },
);

type ScratchpadArguments = Static<typeof parameters>;

const emptyScratchpad = 'The scratchpad is empty. Save a note with action "write", a section name and content.';

function sectionNames(sections: readonly ScratchpadSection[]): string {
  return sections.length === 0 ? 'none yet' : sections.map((entry) => `"${entry.section}"`).join(', ');
}

/** A blank or absent name means "no section"; an over-long one is reported to the model. */
function parseSection(section: string | undefined): { name?: string; error?: string } {
  const name = section?.trim() ?? '';
  if (name === '') return {};
  if (name.length > maximumSectionLength) {
    return { error: `Section names are at most ${maximumSectionLength} characters; "${name.slice(0, 20)}…" has ${name.length}. Use a shorter name.` };
  }
  return { name };
}

/** The sections a session's profile suggests (shown by `list` even while empty). */
export type SuggestedSections = (context: ToolContext) => Promise<readonly string[]>;

export function createScratchpadTool(db: Db, suggestedSections: SuggestedSections = async () => []): Tool<ScratchpadArguments> {
  async function save(action: 'write' | 'append', sessionId: string, name: string | undefined, content: string | undefined) {
    if (name === undefined) return toolFailure(`Send section: the name of the note to ${action}, e.g. "plan".`);
    if (content === undefined || content.trim() === '') {
      return toolFailure(`Send content: the text to ${action === 'write' ? 'store in' : 'add to'} section "${name}". To remove a section, use action "clear".`);
    }
    if (action === 'write') {
      await writeSection(db, sessionId, name, content);
      return `Wrote section "${name}" (${content.length} chars).`;
    }
    await appendSection(db, sessionId, name, content);
    const stored = await readSection(db, sessionId, name);
    return `Appended to section "${name}" (now ${stored?.content.length ?? content.length} chars).`;
  }

  async function read(sessionId: string, name: string | undefined) {
    if (name !== undefined) {
      const stored = await readSection(db, sessionId, name);
      if (stored) return stored.content;
      const sections = await readAllSections(db, sessionId);
      return toolFailure(`There is no section "${name}". Existing sections: ${sectionNames(sections)}.`);
    }
    const sections = await readAllSections(db, sessionId);
    if (sections.length === 0) return emptyScratchpad;
    return sections.map((entry) => `## ${entry.section}\n${entry.content}`).join('\n\n');
  }

  async function list(context: ToolContext) {
    const sections = await readAllSections(db, context.sessionId);
    const written = new Set(sections.map((entry) => entry.section));
    const suggested = (await suggestedSections(context)).filter((section) => !written.has(section));
    if (sections.length === 0 && suggested.length === 0) return emptyScratchpad;
    return [
      'Sections:',
      ...sections.map((entry) => `- ${entry.section} (${entry.content.length} chars)`),
      ...suggested.map((section) => `- ${section} (empty; suggested by your profile)`),
    ].join('\n');
  }

  async function clear(sessionId: string, name: string | undefined) {
    const removed = await clearSections(db, sessionId, name);
    if (name === undefined) return removed === 0 ? 'The scratchpad was already empty.' : `Cleared ${removed} section${removed === 1 ? '' : 's'}.`;
    if (removed > 0) return `Cleared section "${name}".`;
    const sections = await readAllSections(db, sessionId);
    return `There was no section "${name}" to clear. Existing sections: ${sectionNames(sections)}.`;
  }

  return {
    name: 'scratchpad',
    description: 'Named session notes kept across turns: write, append, read, list, clear.',
    parameters,
    async execute(args, context) {
      const { name, error } = parseSection(args.section);
      if (error) return toolFailure(error);
      const action: Action = args.action;
      switch (action) {
        case 'write':
        case 'append':
          return save(action, context.sessionId, name, args.content);
        case 'read':
          return read(context.sessionId, name);
        case 'list':
          return list(context);
        case 'clear':
          return clear(context.sessionId, name);
        default:
          return toolFailure(`Unknown action "${String(action satisfies never)}"; use one of: ${actions.join(', ')}.`);
      }
    },
  };
}
