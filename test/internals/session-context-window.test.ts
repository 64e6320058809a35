// sessionContextWindow: the context meter's maximum is the window of the backend the session's
// turns go to, read from the registry's limits (each backend its own), not from the configuration.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { sessionContextWindow } from '../../src/agent/round-setup.ts';
import { BackendRegistry } from '../../src/llm/backend-registry.ts';
import { ProfileRegistry } from '../../src/profiles/profile-registry.ts';
import { ScriptedBackend } from '../support/scripted-backend.ts';

const profile = (id: string, backendLine: string) => `---
id: ${id}
name: ${id}
description: A profile.
${backendLine}
---
Answer.
`;

let folder: string;
beforeEach(async () => {
  folder = await mkdtemp(path.join(tmpdir(), 'hearth-window-'));
  await writeFile(path.join(folder, 'plain.md'), profile('plain', ''));
  await writeFile(path.join(folder, 'remote.md'), profile('remote', 'backend: openai'));
});
afterEach(async () => {
  await rm(folder, { recursive: true, force: true });
});

async function dependencies() {
  const limits = { ollama: { contextWindow: 8_192, think: true }, openai: { contextWindow: 65_536, think: false } };
  return { backends: new BackendRegistry({ ollama: new ScriptedBackend([]) }, 'ollama', 1, limits), profiles: await ProfileRegistry.open(folder) };
}

describe('sessionContextWindow', () => {
  it("is the window of the session's backend: the profile's, the default one's, or the default one's for a pinned model", async () => {
    const deps = await dependencies();
    expect(sessionContextWindow({ profileId: 'plain', model: null }, deps)).toBe(8_192);
    // Known even though no OpenAI-compatible endpoint is configured.
    expect(sessionContextWindow({ profileId: 'remote', model: null }, deps)).toBe(65_536);
    // A pinned model comes from GET /models, the default backend's list.
    expect(sessionContextWindow({ profileId: 'remote', model: 'llama3' }, deps)).toBe(8_192);
  });

  it('is the default backend\'s for a session whose profile is gone', async () => {
    expect(sessionContextWindow({ profileId: 'deleted', model: null }, await dependencies())).toBe(8_192);
  });
});
