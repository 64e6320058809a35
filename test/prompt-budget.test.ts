import { existsSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseConfig } from '../src/config.ts';
import { defaultPersona } from '../src/agent/persona.ts';
import { buildSystemPrompt } from '../src/agent/system-prompt.ts';
import { ProfileRegistry } from '../src/profiles/profile-registry.ts';
import { openDatabase } from '../src/store/database.ts';
import { createToolRegistry } from '../src/tools/builtin/index.ts';
import { withJail } from './support/jail.ts';

// docs/architecture.md, Budgets: a local model pays for every character of this on every turn.
const promptBudget = 12_000;

describe('built-in tools: manuals and prompt overhead per turn', async () => {
  const profiles = await ProfileRegistry.open('profiles');
  const db = await openDatabase(':memory:');
  const tools = createToolRegistry({
    db,
    ...withJail(parseConfig({})),
    profiles,
    runSubagent: async () => 'not run here',
  });

  it('every built-in tool has a manual in manuals/', () => {
    const missing = tools.list().filter((tool) => !existsSync(path.join('manuals', `${tool.name}.md`)));
    expect(missing.map((tool) => tool.name)).toEqual([]);
  });

  for (const profile of profiles.list()) {
    it(`${profile.id}: system prompt plus tool schemas stay under ${promptBudget} characters`, () => {
      const schemas = tools
        .forNames(profile.tools, { userTools: profile.user_tools })
        .map(({ name, description, parameters }) => JSON.stringify({ type: 'function', function: { name, description, parameters } }));
      const size = buildSystemPrompt(defaultPersona, profile).length + schemas.join('').length;
      expect(size).toBeLessThan(promptBudget);
      expect(schemas.length).toBeGreaterThan(0);
    });
  }
});
