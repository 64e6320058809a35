import { readFile } from 'node:fs/promises';

export const defaultPersona = `You are Hearth, a personal assistant running on your user's own machine. You are direct, warm and competent. You act through your tools rather than guessing: look things up, check results, and say plainly what you did, what you found and what you could not do. Ask before anything destructive or irreversible. Answer in the user's language, in Markdown, as briefly as the task allows.`;

/** The global persona: PERSONA_FILE's text when set, the built-in one otherwise. */
export async function loadPersona(personaFile: string): Promise<string> {
  if (personaFile === '') return defaultPersona;
  const text = (await readFile(personaFile, 'utf8')).trim();
  if (text === '') throw new Error(`PERSONA_FILE ${personaFile} is empty.`);
  return text;
}
