// Issue 23: where bubblewrap cannot run (simulated by a `bwrap` first on PATH that fails the way
// bubblewrap does without user namespaces), Hearth still starts, says why in /health, and
// code_exec and user tools refuse, naming JAIL=off; with JAIL=off set on purpose they run.
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitUntil } from '../support/wait-until.ts';
import { attackerProfile, callTools, startJailedHearth, waitForUserTools, type JailedHearth } from './jail-harness.ts';

let binFolder: string;
let pathWithoutBubblewrap: string;

beforeAll(async () => {
  binFolder = await mkdtemp(path.join(tmpdir(), 'hearth-no-bwrap-'));
  const fake = path.join(binFolder, 'bwrap');
  await writeFile(fake, '#!/bin/sh\necho "bwrap: No permissions to create new namespace, likely because the kernel does not allow non-privileged user namespaces." >&2\nexit 1\n');
  await chmod(fake, 0o755);
  pathWithoutBubblewrap = `${binFolder}:${process.env.PATH}`;
});
afterAll(async () => {
  await rm(binFolder, { recursive: true, force: true });
});

const userTools = { echo_tool: { execute: 'return { echoed: "user tool ran" };' } };
const calls = [
  { name: 'code_exec', arguments: { language: 'javascript', code: 'console.log("code ran")' } },
  { name: 'echo_tool', arguments: {} },
];

async function withHearth(environment: Record<string, string>, check: (hearth: JailedHearth) => Promise<void>): Promise<void> {
  const hearth = await startJailedHearth({ path: pathWithoutBubblewrap, environment, userTools, profiles: { attacker: attackerProfile(['code_exec', 'echo_tool']) } });
  try {
    await check(hearth);
  } finally {
    await hearth.close();
  }
}

describe('without bubblewrap', () => {
  it('Hearth starts, /health says the jail is unavailable and why, code_exec and user tools refuse naming JAIL=off', async () => {
    await withHearth({}, async (hearth) => {
      // The tool is not loaded; the log, GET /agents/tools and so the page say which file and why.
      await waitUntil(() => /user tool not loaded: User tools is off: .*JAIL=off/.test(hearth.output()), 30_000);
      const listed = (await hearth.request('GET', '/agents/tools')).body;
      const refused = listed.errors.filter((error: { file: string }) => error.file === 'echo_tool.ts');
      expect(refused).toHaveLength(1);
      expect(refused[0].message).toMatch(/^User tools is off: .*user namespaces.*JAIL=off/);
      expect(listed.tools.find((tool: { name: string }) => tool.name === 'echo_tool')).toMatchObject({ source: 'user', status: 'failed', file: 'echo_tool.ts', error: refused[0].message });
      const health = await hearth.request('GET', '/health');
      expect(health.status).toBe(200);
      expect(health.body.jail).toMatchObject({ state: 'unavailable' });
      expect(health.body.jail.reason).toMatch(/user namespaces/);
      expect(hearth.output()).toMatch(/jail unavailable/);
      const socket = await hearth.connect(await hearth.createSession('attacker'));
      const [code, tool] = await callTools(hearth, socket, calls);
      socket.close();
      expect(code!.success).toBe(false);
      expect(code!.result).toMatch(/JAIL=off/);
      expect(code!.result).not.toContain('code ran');
      expect(tool!.success).toBe(false);
      expect(tool!.result).not.toContain('user tool ran');
    });
  }, 120_000);

  it('with JAIL=off set on purpose, they run unjailed and /health says so', async () => {
    await withHearth({ JAIL: 'off' }, async (hearth) => {
      await waitForUserTools(hearth, ['echo_tool']);
      expect((await hearth.request('GET', '/health')).body.jail).toMatchObject({ state: 'off' });
      const socket = await hearth.connect(await hearth.createSession('attacker'));
      const [code, tool] = await callTools(hearth, socket, calls);
      socket.close();
      expect(code!.result).toContain('code ran');
      expect(tool!.success, tool!.result).toBe(true);
      expect(tool!.result).toContain('user tool ran');
    });
  }, 120_000);
});
