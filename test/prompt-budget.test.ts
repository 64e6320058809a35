import { existsSync } from 'node:fs';
import { cp, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../src/config.ts';
import { defaultPersona } from '../src/agent/persona.ts';
import { buildSystemPrompt } from '../src/agent/system-prompt.ts';
import { ProfileRegistry } from '../src/profiles/profile-registry.ts';
import { openDatabase } from '../src/store/database.ts';
import { createToolRegistry } from '../src/tools/builtin/index.ts';
import { UserToolManager } from '../src/tools/user-tools/user-tool-manager.ts';
import { createLogger } from '../src/logger.ts';
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
  const builtIn = tools.list();
  // The shipped user tools, as a fresh install loads them (a copy: loading writes a build folder).
  const folder = await mkdtemp(path.join(tmpdir(), 'hearth-prompt-budget-'));
  await cp('user-tools', path.join(folder, 'user-tools'), { recursive: true });
  const userTools = new UserToolManager({
    toolsDir: path.join(folder, 'user-tools'),
    db,
    source: tools.addSource('user', 'user'),
    timeoutMs: 10_000,
    logger: createLogger('silent'),
    sessionFilesDir: path.join(folder, 'session-files'),
    jail: withJail(parseConfig({})).jail,
  });
  const shippedUserTools = await userTools.reload();
  afterAll(async () => {
    await userTools.close();
    await rm(folder, { recursive: true, force: true });
  });

  it('loads every shipped user tool', () => {
    expect(shippedUserTools.errors).toEqual([]);
    expect(shippedUserTools.loaded.length).toBeGreaterThan(0);
  });

  it('every built-in tool has a manual in manuals/', () => {
    const missing = builtIn.filter((tool) => !existsSync(path.join('manuals', `${tool.name}.md`)));
    expect(missing.map((tool) => tool.name)).toEqual([]);
  });

  for (const profile of profiles.list()) {
    it(`${profile.id}: system prompt plus tool schemas, the shipped user tools included, stay under ${promptBudget} characters`, () => {
      const schemas = tools
        .forNames(profile.tools, { userTools: profile.user_tools })
        .map(({ name, description, parameters }) => JSON.stringify({ type: 'function', function: { name, description, parameters } }));
      const size = buildSystemPrompt(defaultPersona, profile).length + schemas.join('').length;
      expect(size).toBeLessThan(promptBudget);
      expect(schemas.length).toBeGreaterThan(0);
      if (profile.user_tools) for (const name of shippedUserTools.loaded) expect(schemas.some((schema) => schema.includes(`"name":"${name}"`)), name).toBe(true);
    });
  }
});
