import type { Profile } from '../profiles/profile.ts';

/** Rebuilt for every LLM call, never stored (README: How a turn works). */
export function buildSystemPrompt(persona: string, profile: Profile): string {
  const sections = [persona, profile.prompt.trim()];
  if (profile.scratchpad_sections.length > 0) {
    sections.push(`Scratchpad sections for your working notes: ${profile.scratchpad_sections.join(', ')}.`);
  }
  return sections.join('\n\n');
}
